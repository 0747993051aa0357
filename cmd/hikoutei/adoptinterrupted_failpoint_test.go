//go:build failpoints

package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
)

// An adopt killed after its first unit is named by status
// (adopt_interrupted) with what it left and the commands that finish or
// discard it, and by the Health of the store opened after it; adopting
// again finishes it, and neither names it any more.
func TestAnAdoptKilledMidwayIsNamedByStatusAndHealth(t *testing.T) {
	dir, sheet := stockStore(t)
	args := adoptArgs(dir, sheet, "--numbers-as-text", "id", "--unit", "1", "--wait", "0")
	killedAt(t, failpoint.AdoptAfterUnit, args...)
	code, out := runCLI(t, "status", "--dir", dir)
	for _, want := range []string{"LEFTOVER", "adopt_interrupted", `tab "Stocks" into Stock`, "after 1 of the 2 rows", "--tab Stocks --entity Stock", "rm "} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Fatalf("status after a killed adopt lacks %q: exit %d:\n%s", want, code, out)
		}
	}
	code, jsonOut, errOut := runSplit("status", "--dir", dir, "--json")
	var st storeStatus
	if code != exitOK || json.Unmarshal([]byte(jsonOut), &st) != nil || len(st.Leftovers) != 1 || st.Leftovers[0].Code != "adopt_interrupted" {
		t.Fatalf("status --json after a killed adopt: exit %d:\n%s%s", code, jsonOut, errOut)
	}
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1, NoAdmin: true}, hikoutei.Entity[stock]("Stock"))
	if err != nil {
		t.Fatal(err)
	}
	h := s.Health().Adoption
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(h, hikoutei.ErrAdoptInterrupted) || !strings.Contains(h.Error(), `"Stocks" (1 of 2 rows created)`) {
		t.Fatalf("Health().Adoption after a killed adopt: %v", h)
	}
	if code, out := runCLI(t, args...); code != exitOK {
		t.Fatalf("adopt again: exit %d:\n%s", code, out)
	}
	if code, out := runCLI(t, "status", "--dir", dir); code != exitOK || strings.Contains(out, "adopt_interrupted") {
		t.Fatalf("status after the adoption finished: exit %d:\n%s", code, out)
	}
}
