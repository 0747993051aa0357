package observe

import (
	"runtime/debug"
	"testing"
)

// TestBuildInfoNamesAWorkTreeBuildAsTheCLIDoes: an untagged build of the
// repository is "devel-<revision>[-dirty]" (what `hikoutei --version`
// prints), never the toolchain's "(devel)"; a link-time version wins; a
// dependency's module version is used as is.
func TestBuildInfoNamesAWorkTreeBuildAsTheCLIDoes(t *testing.T) {
	tree := &debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Path: modulePath, Version: develVersion},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}}
	for _, c := range []struct {
		name, link string
		bi         *debug.BuildInfo
		want       string
	}{
		{"work tree", "", tree, "devel-0123456789ab-dirty"},
		{"go test, no revision", "", &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: develVersion}}, "devel"},
		{"no build information", "", nil, "devel"},
		{"link-time version", "v1.2.3", tree, "v1.2.3"},
		{"dependency", "", &debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: develVersion},
			Deps: []*debug.Module{{Path: modulePath, Version: "v0.4.0"}}}, "v0.4.0"},
		{"go install @version", "", &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "v0.5.0"}}, "v0.5.0"},
	} {
		if got := resolveBuildInfo(c.link, c.bi); got.Version != c.want {
			t.Errorf("%s: version %q, want %q", c.name, got.Version, c.want)
		}
	}
	if got := resolveBuildInfo("", tree); got.Revision != "0123456789abcdef0123" || !got.Modified || got.GoVersion != "go1.26" {
		t.Errorf("work tree: %+v", got)
	}
}
