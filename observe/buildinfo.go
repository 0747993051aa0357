package observe

import (
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// modulePath is this module: its version is the library's.
const modulePath = "github.com/hikoutei/hikoutei-go"

var descBuildInfo = prometheus.NewDesc("hikoutei_build_info",
	"1, labelled with the Hikoutei module version, the VCS revision of the binary (when recorded) and the Go version.",
	[]string{"version", "revision", "goversion"}, nil)

// BuildInfo is what hikoutei_build_info reports.
type BuildInfo struct{ Version, Revision, GoVersion string }

// ReadBuildInfo reads the module version (as a dependency, or as the main
// module of the hikoutei binary; "(devel)" for an untagged build) and the
// VCS revision from the binary's build information.
var ReadBuildInfo = sync.OnceValue(func() BuildInfo {
	b := BuildInfo{Version: "unknown", Revision: "unknown", GoVersion: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if info.Main.Path == modulePath && info.Main.Version != "" {
		b.Version = info.Main.Version
	}
	for _, d := range info.Deps {
		if d.Path == modulePath {
			b.Version = d.Version
		}
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			b.Revision = s.Value
		}
	}
	return b
})

func collectBuildInfo(ch chan<- prometheus.Metric) {
	b := ReadBuildInfo()
	ch <- prometheus.MustNewConstMetric(descBuildInfo, prometheus.GaugeValue, 1, b.Version, b.Revision, b.GoVersion)
}
