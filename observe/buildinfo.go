package observe

import (
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// modulePath is this module: its version is the library's.
const modulePath = "github.com/hikoutei/hikoutei-go"

// linkVersion is the release version set at link time, the one override
// of the version every part of Hikoutei reports (`hikoutei --version`,
// `hikoutei version`, hikoutei_build_info):
//
//	go build -ldflags "-X github.com/hikoutei/hikoutei-go/observe.linkVersion=v1.2.3" ./cmd/hikoutei
var linkVersion string

// develVersion is the module version the Go toolchain records for a build
// from a work tree.
const develVersion = "(devel)"

var descBuildInfo = prometheus.NewDesc("hikoutei_build_info",
	"1, labelled with the Hikoutei version (as hikoutei --version prints it), the VCS revision of the binary (when recorded) and the Go version.",
	[]string{"version", "revision", "goversion"}, nil)

// BuildInfo is the build's version as every part of Hikoutei reports it
// (hikoutei_build_info, `hikoutei version`).
type BuildInfo struct {
	// Version is the link-time version, else the module version (as the
	// main module of the hikoutei binary, or as a dependency), else, for
	// a build from a work tree, "devel-" and the first 12 characters of
	// the VCS revision ("-dirty" when the tree had changes); "devel"
	// alone when the build recorded no revision (go run, go test).
	Version string
	// Revision and Time are the VCS revision and its time ("" when not
	// recorded); Modified: the work tree had changes.
	Revision, Time string
	Modified       bool
	GoVersion      string
}

// ReadBuildInfo reads the build's version once (see BuildInfo).
var ReadBuildInfo = sync.OnceValue(func() BuildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return resolveBuildInfo(linkVersion, bi)
})

// resolveBuildInfo is the version rule of BuildInfo, for the link-time
// version link and the build information bi (nil: none recorded).
func resolveBuildInfo(link string, bi *debug.BuildInfo) BuildInfo {
	b := BuildInfo{Version: link, GoVersion: runtime.Version()}
	if bi == nil {
		return b.withDefault()
	}
	b.GoVersion = bi.GoVersion
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	if b.Version == "" {
		b.Version = moduleVersion(bi)
	}
	return b.withDefault()
}

// moduleVersion is this module's recorded version ("" for a build from a
// work tree).
func moduleVersion(bi *debug.BuildInfo) string {
	v := ""
	if bi.Main.Path == modulePath {
		v = bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == modulePath {
			v = d.Version
		}
	}
	if v == develVersion {
		return ""
	}
	return v
}

// withDefault names a development build by its revision.
func (b BuildInfo) withDefault() BuildInfo {
	if b.Version != "" {
		return b
	}
	b.Version = "devel"
	if b.Revision != "" {
		b.Version += "-" + b.Revision[:min(12, len(b.Revision))]
	}
	if b.Modified {
		b.Version += "-dirty"
	}
	return b
}

func collectBuildInfo(ch chan<- prometheus.Metric) {
	b := ReadBuildInfo()
	rev := b.Revision
	if rev == "" {
		rev = "unknown"
	}
	ch <- prometheus.MustNewConstMetric(descBuildInfo, prometheus.GaugeValue, 1, b.Version, rev, b.GoVersion)
}
