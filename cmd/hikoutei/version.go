package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/hikoutei/hikoutei-go/events"
)

// version is the release version, set at link time:
//
//	go build -ldflags "-X main.version=v1.2.3" ./cmd/hikoutei
//
// When empty, the version comes from the build information.
var version string

// develVersion is the module version of a build from a work tree.
const develVersion = "(devel)"

// versionInfo is what `version --json` prints.
type versionInfo struct {
	Version         string `json:"version"`
	Revision        string `json:"vcs_revision,omitempty"`
	Time            string `json:"vcs_time,omitempty"`
	Modified        bool   `json:"vcs_modified"`
	GoVersion       string `json:"go_version"`
	LogFormat       int    `json:"log_format"`
	LeaseFileSchema int    `json:"lease_file_schema"`
}

// buildVersion reads the version: the link-time one, else the module
// version, else (a build from a work tree) "devel-" and the VCS
// revision, "-dirty" when the tree had changes; "devel" alone only when
// the build recorded no revision (go run, go test).
func buildVersion() versionInfo {
	v := versionInfo{Version: version, GoVersion: "unknown", LogFormat: int(events.LogFormat), LeaseFileSchema: int(events.LeaseFileSchema)}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v.withDefault()
	}
	v.GoVersion = bi.GoVersion
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	if v.Version == "" && bi.Main.Version != develVersion {
		v.Version = bi.Main.Version
	}
	return v.withDefault()
}

// withDefault names a development build by its revision.
func (v versionInfo) withDefault() versionInfo {
	if v.Version != "" {
		return v
	}
	v.Version = "devel"
	if v.Revision != "" {
		v.Version += "-" + v.Revision[:min(12, len(v.Revision))]
	}
	if v.Modified {
		v.Version += "-dirty"
	}
	return v
}

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version [--json]",
		Short: "Print the build version (module version or VCS revision), Go version and on-disk format versions",
		Args:  argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := buildVersion()
			if asJSON {
				return printJSON(cmd.OutOrStdout(), v)
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "hikoutei %s%s (%s) log-format %d lease-file-schema %d\n",
				v.Version, v.built(), v.GoVersion, v.LogFormat, v.LeaseFileSchema)
			return err
		},
	}
	addJSONFlag(cmd, &asJSON, shapeObject)
	return cmd
}

// built is " built from <revision> of <time>" when the build recorded them.
func (v versionInfo) built() string {
	if v.Revision == "" {
		return ""
	}
	s := " revision " + v.Revision
	if v.Time != "" {
		s += " of " + v.Time
	}
	return s
}
