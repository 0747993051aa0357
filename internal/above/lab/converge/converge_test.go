package converge

import (
	"bytes"
	"context"
	"testing"
	"time"
)

// TestI28_DamageCampaignShortConvergesWithoutDuplicatesOrLoss is the short
// damage campaign: five seeded runs of person-style damage, restarts and
// spreadsheet switches; after damage stops each sheet equals canonical
// state within two reconciliation periods plus a margin, no anchor ever
// shows twice, and nothing acknowledged is lost. The margin is 3 s here,
// not the campaign's 1 s: this runs in a race build beside every other
// package's tests (make test); make converge holds the 1 s bound.
func TestI28_DamageCampaignShortConvergesWithoutDuplicatesOrLoss(t *testing.T) {
	var out bytes.Buffer
	res, err := Run(context.Background(), Config{Dir: t.TempDir(), Runs: 5, Seed: 16, Steps: 40, Margin: 3 * time.Second, Out: &out})
	t.Log("\n" + out.String() + res.Counts())
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() || res.Runs != 5 {
		t.Fatalf("%s\n%v", res.Line(), res.Problems)
	}
	var damaged int
	for _, k := range damageKinds {
		damaged += res.Acts[k]
	}
	if damaged == 0 {
		t.Fatal("no damage was done: the campaign proved nothing")
	}
	if res.Erased == 0 || res.PersonalValues == 0 {
		t.Fatal("no subject was erased: the personal checks proved nothing")
	}
}

func TestKindNamesAreSnakeCaseAndComplete(t *testing.T) {
	seen := map[string]bool{}
	for k := range kindCount {
		n := k.String()
		if n == "" || seen[n] || bytes.ContainsAny([]byte(n), " -ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
			t.Fatalf("kind %d named %q", int(k), n)
		}
		seen[n] = true
	}
}
