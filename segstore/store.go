package segstore

import (
	"context"
	"strings"
)

// Store holds sealed segments by name. Implementations are safe for
// concurrent use. The contract (segstoretest.Run checks it):
//
//   - Put stores data under name atomically and durably: once it returns
//     nil, Get returns exactly data, in this process and after a crash
//     or a restart; if it fails or the process dies during it, Get
//     returns ErrNotFound or the whole of an earlier Put of the name,
//     never a part. A Put of a name that exists replaces it whole.
//   - Get returns the bytes of name, or an error wrapping ErrNotFound
//     when there is none. Stat does the same for its size.
//   - List returns every name stored, in lexical order, and may list
//     the leftovers of Puts that did not complete under names no Put was
//     given (a folder's temporary files); it never lists a name whose
//     Put did not complete.
//   - Delete removes name; deleting a name that is absent is not an
//     error.
//   - Any other failure (the store cannot be reached, refused the
//     credentials, timed out) wraps ErrUnavailable; its text never holds
//     the credentials of the URL the store was opened with.
//   - Location is where the segments live for people to read: a path or
//     the URL's scheme and bucket, never its credentials or query.
//   - Names are single path elements: ValidName says which.
type Store interface {
	Put(ctx context.Context, name string, data []byte) error
	Get(ctx context.Context, name string) ([]byte, error)
	Stat(ctx context.Context, name string) (Info, error)
	List(ctx context.Context) ([]Info, error)
	Delete(ctx context.Context, name string) error
	Location() Location
	Close() error
}

// PrefixLister is a Store that lists only the names starting with a
// prefix, in lexical order, without visiting the others' metadata (an
// object store's native prefix listing; a folder stats only the names
// that match). A seal uses it to find the leftovers of earlier attempts
// at the same first record, so that its cost does not grow with the
// number of segments stored; ListPrefix below falls back to List.
type PrefixLister interface {
	ListPrefix(ctx context.Context, prefix string) ([]Info, error)
}

// ListPrefix lists the names of s starting with prefix: s's own
// ListPrefix when it has one, else List filtered.
func ListPrefix(ctx context.Context, s Store, prefix string) ([]Info, error) {
	if p, ok := s.(PrefixLister); ok {
		return p.ListPrefix(ctx, prefix)
	}
	all, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, i := range all {
		if strings.HasPrefix(i.Name, prefix) {
			out = append(out, i)
		}
	}
	return out, nil
}

// Info is a stored segment's name and size in bytes.
type Info struct {
	Name string
	Size int64
}

// Location is where a Store keeps its segments, safe to show: the
// URL's scheme ("dir" for a folder) and the folder or bucket with no
// credentials nor query.
type Location struct {
	Scheme string
	Where  string
}

// String is "scheme:where" (a folder: its path).
func (l Location) String() string {
	if l.Scheme == SchemeDir {
		return l.Where
	}
	return l.Scheme + "://" + l.Where
}
