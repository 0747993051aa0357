package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/hikoutei/hikoutei-go/events"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the build version, Go version and on-disk format versions",
		Args:  argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			version, goVersion := "(devel)", "unknown"
			if bi, ok := debug.ReadBuildInfo(); ok {
				version, goVersion = bi.Main.Version, bi.GoVersion
			}
			fmt.Fprintf(cmd.OutOrStdout(), "hikoutei %s (%s) log-format %d lease-file-schema %d\n",
				version, goVersion, events.LogFormat, events.LeaseFileSchema)
			return nil
		},
	}
}
