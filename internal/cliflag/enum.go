// Package cliflag holds the flag types the commands (hikoutei and
// hikoutei-lab) share.
package cliflag

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// Enum is a string flag that accepts only the listed values: anything
// else is a usage error (exit 2) when the flag is parsed.
type Enum struct {
	value   *string
	allowed []string
}

// AddEnum defines --name on cmd, restricted to allowed (the first is not
// implied: def is the default).
func AddEnum(cmd *cobra.Command, p *string, name, def, usage string, allowed ...string) {
	*p = def
	cmd.Flags().Var(&Enum{value: p, allowed: allowed}, name, fmt.Sprintf("%s: %s", usage, strings.Join(allowed, ", ")))
}

func (f *Enum) String() string { return *f.value }

// Type implements pflag.Value.
func (f *Enum) Type() string { return "string" }

// Set implements pflag.Value: v must be one of the allowed values.
func (f *Enum) Set(v string) error {
	if !slices.Contains(f.allowed, v) {
		return fmt.Errorf("%q is not one of %s", v, strings.Join(f.allowed, ", "))
	}
	*f.value = v
	return nil
}

// Allowed lists the accepted values (the CLI consistency test tries a
// value outside them on every enum flag).
func (f *Enum) Allowed() []string { return f.allowed }
