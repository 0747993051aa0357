package blobstore_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"

	"github.com/hikoutei/hikoutei-go/segstore"
	"github.com/hikoutei/hikoutei-go/segstore/blobstore"
	"github.com/hikoutei/hikoutei-go/segstore/segstoretest"
)

func TestMemblobConformance(t *testing.T) {
	segstoretest.Run(t, segstoretest.Impl{
		Open: func(t *testing.T) segstore.Store {
			return blobstore.New(memblob.OpenBucket(nil), segstore.Location{Scheme: "mem", Where: "test"})
		},
	})
}

// fileBucket opens a fileblob bucket in dir, keeping no attribute
// sidecar files beside the objects.
func fileBucket(t *testing.T, dir string) *blob.Bucket {
	t.Helper()
	b, err := fileblob.OpenBucket(dir, &fileblob.Options{Metadata: fileblob.MetadataDontWrite})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFileblobConformance(t *testing.T) {
	dirs := map[segstore.Store]string{}
	segstoretest.Run(t, segstoretest.Impl{
		Open: func(t *testing.T) segstore.Store {
			dir := t.TempDir()
			s := blobstore.New(fileBucket(t, dir), segstore.Location{Scheme: "fileblob", Where: dir})
			dirs[s] = dir
			return s
		},
		Reopen: func(t *testing.T, s segstore.Store) segstore.Store {
			return blobstore.New(fileBucket(t, dirs[s]), s.Location())
		},
	})
}

func TestMemURLOpensThroughSegstoreWithAPrefix(t *testing.T) {
	ctx := context.Background()
	s, err := segstore.Open(ctx, "mem://bucket/some/prefix", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if loc := s.Location(); loc.Scheme != "mem" || loc.Where != "bucket/some/prefix" {
		t.Fatalf("location %+v", loc)
	}
	if err := s.Put(ctx, "a.seg.zst", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if l, err := s.List(ctx); err != nil || len(l) != 1 || l[0].Name != "a.seg.zst" {
		t.Fatalf("List under the prefix: %v, %v", l, err)
	}
}

func TestOpenErrorsNeverRepeatCredentials(t *testing.T) {
	u, _ := url.Parse("nosuchdriver://user:hunter2@bucket/p?access_key=AKIAXYZ&region=r")
	_, err := blobstore.Open(context.Background(), u)
	if !errors.Is(err, segstore.ErrUnavailable) {
		t.Fatalf("Open with no driver: %v, want ErrUnavailable", err)
	}
	for _, secret := range []string{"hunter2", "AKIAXYZ", "user"} {
		if strings.Contains(err.Error(), secret) {
			t.Fatalf("the error shows %q: %v", secret, err)
		}
	}
}
