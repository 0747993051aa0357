package segstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hikoutei/hikoutei-go/segstore"
	"github.com/hikoutei/hikoutei-go/segstore/segstoretest"
)

func TestDirConformance(t *testing.T) {
	segstoretest.Run(t, segstoretest.Impl{
		Open: func(t *testing.T) segstore.Store { return segstore.NewDir(filepath.Join(t.TempDir(), "segments")) },
		Reopen: func(t *testing.T, s segstore.Store) segstore.Store {
			return segstore.NewDir(s.(*segstore.Dir).Path())
		},
	})
}

func TestDirFilesArePrivateAndNamedAsBefore(t *testing.T) {
	dir := t.TempDir()
	s, err := segstore.Open(context.Background(), "", dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(context.Background(), "n.seg.zst", []byte("x")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "segments", "n.seg.zst"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", fi.Mode().Perm())
	}
	if loc := s.Location(); loc.Scheme != segstore.SchemeDir || loc.Where != filepath.Join(dir, "segments") {
		t.Fatalf("location %+v", loc)
	}
}

func TestOpenResolvesFileURLsAndRefusesUnknownSchemes(t *testing.T) {
	dir := t.TempDir()
	s, err := segstore.Open(context.Background(), "file://"+dir+"/elsewhere", "/unused")
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := s.(*segstore.Dir); !ok || d.Path() != filepath.Join(dir, "elsewhere") {
		t.Fatalf("file URL opened %#v", s)
	}
	for _, bad := range []string{"file://host/x", "file:relative", "%zz", "file:///x?secret=1"} {
		if _, err := segstore.Open(context.Background(), bad, dir); !errors.Is(err, segstore.ErrUnavailable) {
			t.Errorf("Open(%q): %v, want ErrUnavailable", bad, err)
		}
	}
}

func TestRedactDropsCredentialsAndQuery(t *testing.T) {
	for in, want := range map[string]string{
		"s3://AKIA:sekrit@bucket/pre/fix?region=x&secret=y": "s3://bucket/pre/fix",
		"gs://b":          "gs://b",
		"file:///var/seg": "/var/seg",
		"":                "",
		"%zz://":          "(unparsable URL)",
	} {
		if got := segstore.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}
