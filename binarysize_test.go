package hikoutei_test

import (
	"os/exec"
	"strings"
	"testing"
)

// localOnlyProgram is the local-only program whose binary docs/operations.md
// "Binary size" measures.
const localOnlyProgram = "./examples/localonly-size"

// notLinkedLocally are the packages a local-only program must not link:
// the embedded NATS server comes only with package natsserver, and the
// Google Sheets client (the Google API client, gRPC, Google's auth
// libraries and oauth2's Google parts) only with packages sheetsio/gsheets
// and gsync.
var notLinkedLocally = []string{
	"github.com/nats-io/nats-server/",
	"google.golang.org/api/",
	"google.golang.org/grpc/",
	"cloud.google.com/go/auth/",
	"golang.org/x/oauth2/google/",
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets/",
	"github.com/hikoutei/hikoutei-go/gsync/",
}

func TestLocalOnlyProgramLinksNoSyncOrNATS(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("this test lists the example's packages with the go command, which is not on PATH (install Go or add its bin directory to PATH): %v", err)
	}
	out, err := exec.Command(goBin, "list", "-deps", localOnlyProgram).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", localOnlyProgram, err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps %s listed only %d packages: %q", localOnlyProgram, len(deps), deps)
	}
	for _, dep := range deps {
		for _, banned := range notLinkedLocally {
			if dep == strings.TrimSuffix(banned, "/") || strings.HasPrefix(dep, banned) {
				t.Errorf("the local-only program links %s", dep)
			}
		}
	}
}
