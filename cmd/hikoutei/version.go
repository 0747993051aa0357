package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/observe"
)

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

// buildVersion reads the version from the one source every part of
// Hikoutei reports (observe.ReadBuildInfo: also hikoutei_build_info's
// version label), with the on-disk format versions.
func buildVersion() versionInfo {
	b := observe.ReadBuildInfo()
	return versionInfo{Version: b.Version, Revision: b.Revision, Time: b.Time, Modified: b.Modified, GoVersion: b.GoVersion,
		LogFormat: int(events.LogFormat), LeaseFileSchema: int(events.LeaseFileSchema)}
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
