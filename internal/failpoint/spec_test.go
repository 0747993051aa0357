package failpoint

import (
	"errors"
	"strings"
	"testing"

	"github.com/hikoutei/hikoutei-go/internal/config"
)

func envOf(v string) config.Lookup {
	return func(k string) (string, bool) { return v, k == EnvVar }
}

// TestRepro12_UnknownFailpointNamesAreRefused: a spec naming a failpoint
// that does not exist (a typo) is refused, listing the known names, in
// every build.
func TestRepro12_UnknownFailpointNamesAreRefused(t *testing.T) {
	for _, spec := range []string{"log.afer_commit=crash", LogAfterCommit + "=crash,nope=off", "LOG.AFTER_COMMIT=crash"} {
		_, err := Parse(spec)
		var ue *UnknownError
		if !errors.Is(err, ErrUnknown) || !errors.As(err, &ue) || len(ue.Known) != len(Names) ||
			!strings.Contains(err.Error(), "known: "+strings.Join(Names, ", ")) {
			t.Fatalf("Parse(%q) = %v", spec, err)
		}
	}
	for _, name := range Names {
		if _, err := Parse(name + "=crash@2"); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

// TestRepro12_CheckEnvRefusesWhatThisBuildCannotArm: a set
// HIKOUTEI_FAILPOINTS is refused in a build without failpoints (whatever
// it says) and, in a build with them, when Parse refuses it; blank is fine.
func TestRepro12_CheckEnvRefusesWhatThisBuildCannotArm(t *testing.T) {
	for _, blank := range []string{"", " ", " , "} {
		if err := CheckEnv(envOf(blank)); err != nil {
			t.Fatalf("%q: %v", blank, err)
		}
	}
	for spec, want := range map[string]error{"nope=crash": ErrUnknown, LogAfterCommit + "=explode": ErrSpec} {
		if !Compiled {
			want = ErrNotCompiled
		}
		err := CheckEnv(envOf(spec))
		var ee *config.EnvError
		if !errors.Is(err, want) || !errors.As(err, &ee) || ee.Var != EnvVar {
			t.Fatalf("%q: %v, want %v naming %s", spec, err, want, EnvVar)
		}
	}
	err := CheckEnv(envOf(LogAfterCommit + "=crash"))
	if Compiled && err != nil || !Compiled && !errors.Is(err, ErrNotCompiled) {
		t.Fatalf("valid spec, compiled %v: %v", Compiled, err)
	}
}
