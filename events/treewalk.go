package events

// treeWalk visits the B+tree of a boltFile's meta in use, checking every
// page strictly (rawPage.elements) and that no page is reached twice. A
// damaged page is reported and its subtree skipped; the walk goes on.
type treeWalk struct {
	f      *boltFile
	m      boltMeta // the meta whose tree is walked
	seen   map[uint64]bool
	report func(error)
	roots  map[string][]byte // rootBuckets, once walked
}

func newTreeWalk(f *boltFile, m boltMeta, report func(error)) *treeWalk {
	return &treeWalk{f: f, m: m, seen: map[uint64]bool{}, report: report}
}

// rootBuckets returns the value of every top-level bucket by name.
func (w *treeWalk) rootBuckets() map[string][]byte {
	if w.roots != nil {
		return w.roots
	}
	out := map[string][]byte{}
	w.roots = out
	if w.m.hwm == 0 {
		return out // no tree
	}
	w.node(w.m.root, 0, func(page uint64, e pageElem) {
		if e.flags&bucketLeafFlag == 0 {
			w.report(corrupt(CheckBucket, page, "root element %q is not a bucket", e.key))
			return
		}
		out[string(e.key)] = e.value
	})
	return out
}

// keyValues returns the key/values of a bucket (nil bucket: none).
func (w *treeWalk) keyValues(bucket []byte) map[string][]byte {
	out := map[string][]byte{}
	if bucket != nil {
		w.walk(bucket, func(page uint64, e pageElem) {
			w.nested(page, e)
			out[string(e.key)] = e.value
		})
	}
	return out
}

// walk calls fn for every leaf element of the bucket whose value is bucket,
// in key order as far as the pages are sound; nested buckets are walked too.
func (w *treeWalk) walk(bucket []byte, fn func(page uint64, e pageElem)) {
	w.bucket(bucket, 0, fn)
}

func (w *treeWalk) bucket(value []byte, depth int, fn func(uint64, pageElem)) {
	root, inline, err := bucketRef(value)
	switch {
	case err != nil:
		w.report(corrupt(CheckBucket, 0, "%v", err))
	case inline != nil && inline.flags != flagLeaf:
		w.report(corrupt(CheckPage, 0, "inline bucket page of type %s", inline.typ()))
	case inline != nil:
		w.elems(inline, depth, fn)
	default:
		w.node(root, depth, fn)
	}
}

func (w *treeWalk) node(id uint64, depth int, fn func(uint64, pageElem)) {
	if depth > maxTreeDepth {
		w.report(corrupt(CheckPage, id, "the tree is deeper than %d", maxTreeDepth))
		return
	}
	p, err := w.f.page(id, w.m.hwm)
	if err != nil {
		w.report(err)
		return
	}
	for i := uint64(0); i <= uint64(p.overflow); i++ {
		if w.seen[id+i] {
			w.report(corrupt(CheckPage, id+i, "page reached twice"))
			return
		}
		w.seen[id+i] = true
	}
	w.elems(p, depth, fn)
}

func (w *treeWalk) elems(p *rawPage, depth int, fn func(uint64, pageElem)) {
	elems, err := p.elements()
	if err != nil {
		w.report(err)
		return
	}
	for _, e := range elems {
		if p.flags == flagBranch {
			w.node(e.child, depth+1, fn)
			continue
		}
		fn(p.id, e)
	}
}

// nested is a walk callback that checks the pages of a bucket nested in
// another (the log has none; bbolt's check would read them).
func (w *treeWalk) nested(_ uint64, e pageElem) {
	if e.flags&bucketLeafFlag != 0 {
		w.walk(e.value, w.nested)
	}
}
