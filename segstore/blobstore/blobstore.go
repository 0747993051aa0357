// Package blobstore keeps sealed segments in an object store through
// gocloud.dev/blob: S3, GCS, Azure Blob Storage or any bucket a driver
// linked into the program opens by URL, and mem:// (an in-memory bucket,
// for tests). Importing it registers its opener with package segstore
// for every scheme but file; a program links the drivers it wants by
// importing them too (e.g. _ "gocloud.dev/blob/s3blob"). It is kept out
// of the root package so that a program that keeps its segments on its
// own disk links none of it.
package blobstore

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/memblob" // mem://, for tests
	"gocloud.dev/gcerrors"

	"github.com/hikoutei/hikoutei-go/internal/failpoint"
	"github.com/hikoutei/hikoutei-go/segstore"
)

func init() { segstore.RegisterFallback(Open) }

// Store is a segstore.Store in a gocloud.dev/blob bucket: one object per
// segment, each written with its MD5 so the store refuses a torn upload.
// An object store's write is atomic (an object appears whole or not at
// all) and durable once acknowledged.
type Store struct {
	b      *blob.Bucket
	loc    segstore.Location
	secret []string // the URL's credentials and query values, scrubbed from errors
}

// New is the Store of bucket b, shown as loc. Closing it closes b.
func New(b *blob.Bucket, loc segstore.Location) *Store { return &Store{b: b, loc: loc} }

// Open opens the bucket u names with the drivers linked into the
// program (blob.OpenBucket). A path after the bucket is a prefix every
// segment's key starts with. Errors: segstore.ErrUnavailable, never
// repeating the URL's credentials.
func Open(ctx context.Context, u *url.URL) (segstore.Store, error) {
	s := &Store{loc: segstore.RedactedLocation(u), secret: secretsOf(u)}
	bu := *u
	prefix := strings.TrimPrefix(bu.Path, "/")
	bu.Path, bu.RawPath = "", ""
	b, err := blob.OpenBucket(ctx, bu.String())
	if err != nil {
		return nil, s.fail("open", "", err)
	}
	if prefix != "" {
		if !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
		b = blob.PrefixedBucket(b, prefix)
	}
	s.b = b
	return s, nil
}

// secretsOf lists the parts of u that may be credentials: its user
// information and every query value.
func secretsOf(u *url.URL) []string {
	var out []string
	if u.User != nil {
		out = append(out, u.User.Username())
		if p, ok := u.User.Password(); ok {
			out = append(out, p)
		}
	}
	for _, vs := range u.Query() {
		out = append(out, vs...)
	}
	return slicesNonEmpty(out)
}

func slicesNonEmpty(in []string) []string {
	out := in[:0]
	for _, s := range in {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Put uploads data as the object name with its MD5. The object appears
// only when the writer closes (the failpoint seal.after_write stops a seal
// after the bytes went to the writer, before the upload completes).
func (s *Store) Put(ctx context.Context, name string, data []byte) error {
	if !segstore.ValidName(name) {
		return fmt.Errorf("%w: %q", segstore.ErrInvalidName, name)
	}
	sum := md5.Sum(data)
	w, err := s.b.NewWriter(ctx, name, &blob.WriterOptions{ContentMD5: sum[:], ContentType: "application/zstd"})
	if err != nil {
		return s.fail("put", name, err)
	}
	if _, err := w.Write(data); err != nil {
		_ = w.Close()
		return s.fail("put", name, err)
	}
	failpoint.Inject(failpoint.SealAfterWrite)
	if err := w.Close(); err != nil {
		return s.fail("put", name, err)
	}
	return nil
}

// Get downloads the object name.
func (s *Store) Get(ctx context.Context, name string) ([]byte, error) {
	if !segstore.ValidName(name) {
		return nil, fmt.Errorf("%w: %q", segstore.ErrInvalidName, name)
	}
	b, err := s.b.ReadAll(ctx, name)
	if err != nil {
		return nil, s.fail("get", name, err)
	}
	return b, nil
}

// Stat is the size of the object name.
func (s *Store) Stat(ctx context.Context, name string) (segstore.Info, error) {
	if !segstore.ValidName(name) {
		return segstore.Info{}, fmt.Errorf("%w: %q", segstore.ErrInvalidName, name)
	}
	a, err := s.b.Attributes(ctx, name)
	if err != nil {
		return segstore.Info{}, s.fail("stat", name, err)
	}
	return segstore.Info{Name: name, Size: a.Size}, nil
}

// List lists the objects at the top of the bucket (or its prefix).
func (s *Store) List(ctx context.Context) ([]segstore.Info, error) { return s.ListPrefix(ctx, "") }

// ListPrefix lists the objects whose names start with prefix (the
// bucket's own prefix listing).
func (s *Store) ListPrefix(ctx context.Context, prefix string) ([]segstore.Info, error) {
	it := s.b.List(&blob.ListOptions{Prefix: prefix, Delimiter: "/"})
	var out []segstore.Info
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, s.fail("list", "", err)
		}
		if !o.IsDir && segstore.ValidName(o.Key) {
			out = append(out, segstore.Info{Name: o.Key, Size: o.Size})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Delete removes the object name (absent: nothing to do).
func (s *Store) Delete(ctx context.Context, name string) error {
	if !segstore.ValidName(name) {
		return fmt.Errorf("%w: %q", segstore.ErrInvalidName, name)
	}
	if err := s.b.Delete(ctx, name); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return s.fail("delete", name, err)
	}
	return nil
}

// Location is the bucket's scheme and name (and prefix).
func (s *Store) Location() segstore.Location { return s.loc }

// Close closes the bucket.
func (s *Store) Close() error {
	if err := s.b.Close(); err != nil {
		return s.fail("close", "", err)
	}
	return nil
}

// fail is segstore.ErrNotFound for an absent object, else
// segstore.ErrUnavailable with the driver's code and text, the URL's
// credentials scrubbed from it.
func (s *Store) fail(op, name string, err error) error {
	code := gcerrors.Code(err)
	text := err.Error()
	for _, secret := range s.secret {
		text = strings.ReplaceAll(text, secret, "REDACTED")
	}
	if code == gcerrors.NotFound && name != "" {
		return fmt.Errorf("%w: %s in %s", segstore.ErrNotFound, name, s.loc)
	}
	if name == "" {
		return fmt.Errorf("%w: %s %s (%s): %s", segstore.ErrUnavailable, op, s.loc, code, text)
	}
	return fmt.Errorf("%w: %s %s in %s (%s): %s", segstore.ErrUnavailable, op, name, s.loc, code, text)
}
