package evolve

// The family of shapes a run walks. Item is the application's entity; it
// changes between the versions below (graph.go says which change leads
// from one to another). V3 is the hub: every change starts from it or
// leads back to it. Other is a second entity a change adds or removes.
//
// A field's earlier names (was=) stay in the tags for good, as the docs
// allow: V3's name names title, the name V6 gives it.

// V1 is the first version.
type V1 struct {
	ID    string `hikoutei:"id,pk"`
	Name  string `hikoutei:"name"`
	Count int64  `hikoutei:"count"`
	Notes string `hikoutei:"notes,user"`
}

// V2 adds the field size.
type V2 struct {
	ID    string `hikoutei:"id,pk"`
	Name  string `hikoutei:"name"`
	Count int64  `hikoutei:"count"`
	Notes string `hikoutei:"notes,user"`
	Size  int64  `hikoutei:"size"`
}

// V3 adds the user field tag.
type V3 struct {
	ID    string `hikoutei:"id,pk"`
	Name  string `hikoutei:"name,was=title"`
	Count int64  `hikoutei:"count"`
	Notes string `hikoutei:"notes,user"`
	Size  int64  `hikoutei:"size"`
	Tag   string `hikoutei:"tag,user"`
}

// V4 lets people edit name.
type V4 struct {
	ID    string `hikoutei:"id,pk"`
	Name  string `hikoutei:"name,user"`
	Count int64  `hikoutei:"count"`
	Notes string `hikoutei:"notes,user"`
	Size  int64  `hikoutei:"size"`
	Tag   string `hikoutei:"tag,user"`
}

// V5 declares V3's fields in another order.
type V5 struct {
	ID    string `hikoutei:"id,pk"`
	Tag   string `hikoutei:"tag,user"`
	Size  int64  `hikoutei:"size"`
	Notes string `hikoutei:"notes,user"`
	Count int64  `hikoutei:"count"`
	Name  string `hikoutei:"name"`
}

// V6 renames name to title.
type V6 struct {
	ID    string `hikoutei:"id,pk"`
	Title string `hikoutei:"title,was=name"`
	Count int64  `hikoutei:"count"`
	Notes string `hikoutei:"notes,user"`
	Size  int64  `hikoutei:"size"`
	Tag   string `hikoutei:"tag,user"`
}

// V7 widens count to a float.
type V7 struct {
	ID    string  `hikoutei:"id,pk"`
	Name  string  `hikoutei:"name"`
	Count float64 `hikoutei:"count"`
	Notes string  `hikoutei:"notes,user"`
	Size  int64   `hikoutei:"size"`
	Tag   string  `hikoutei:"tag,user"`
}

// V8 makes name a number (a retype most names do not convert to).
type V8 struct {
	ID    string  `hikoutei:"id,pk"`
	Name  float64 `hikoutei:"name"`
	Count int64   `hikoutei:"count"`
	Notes string  `hikoutei:"notes,user"`
	Size  int64   `hikoutei:"size"`
	Tag   string  `hikoutei:"tag,user"`
}

// V9 drops the user field notes.
type V9 struct {
	ID    string `hikoutei:"id,pk"`
	Name  string `hikoutei:"name"`
	Count int64  `hikoutei:"count"`
	Size  int64  `hikoutei:"size"`
	Tag   string `hikoutei:"tag,user"`
}

// VN no longer lets people edit notes.
type VN struct {
	ID    string `hikoutei:"id,pk"`
	Name  string `hikoutei:"name"`
	Count int64  `hikoutei:"count"`
	Notes string `hikoutei:"notes"`
	Size  int64  `hikoutei:"size"`
	Tag   string `hikoutei:"tag,user"`
}

// VK keys items by a new field, code (another primary key); ref keeps
// the id.
type VK struct {
	Code  string `hikoutei:"code,pk,was=key"`
	Ref   string `hikoutei:"ref"`
	Name  string `hikoutei:"name"`
	Count int64  `hikoutei:"count"`
	Notes string `hikoutei:"notes,user"`
	Size  int64  `hikoutei:"size"`
	Tag   string `hikoutei:"tag,user"`
}

// VR renames VK's key to key.
type VR struct {
	Key   string `hikoutei:"key,pk,was=code"`
	Ref   string `hikoutei:"ref"`
	Name  string `hikoutei:"name"`
	Count int64  `hikoutei:"count"`
	Notes string `hikoutei:"notes,user"`
	Size  int64  `hikoutei:"size"`
	Tag   string `hikoutei:"tag,user"`
}

// Other is the second entity: people edit a number and a text.
type Other struct {
	Code  string `hikoutei:"code,pk"`
	Size  int64  `hikoutei:"size,user"`
	Label string `hikoutei:"label,user"`
}
