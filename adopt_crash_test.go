package hikoutei

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
)

// adoptChildEnv makes this test binary adopt a tab and be killed by the
// failpoint HIKOUTEI_FAILPOINTS arms (TestMain).
const adoptChildEnv = "HIKOUTEI_TEST_ADOPT_CHILD"

// Stop is the entity of the crash test.
type Stop struct {
	Code string `hikoutei:"code,pk"`
	Name string `hikoutei:"name"`
	Seq  int64  `hikoutei:"seq,user"`
}

const (
	stopsSheet = "adopt-crash-sheet"
	stopsTab   = "Stops"
	stopsUnit  = 2
)

// adoptChild is what the child is told: the store and the emulator.
type adoptChild struct {
	Dir, Endpoint string
	Round         int
}

// openStops opens dir syncing Stop to the emulator at endpoint (workers
// left to the caller), on a clock round hours after t0, so a run takes a
// dead run's lease at once.
func openStops(ctx context.Context, c adoptChild) (*Store, error) {
	prov, err := gsheets.New(ctx, gsheets.Config{Endpoint: c.Endpoint, Pacing: gsheets.Pacing{ReadInterval: -1, WriteInterval: -1}})
	if err != nil {
		return nil, err
	}
	clock := events.NewManualClock(t0.Add(time.Duration(c.Round) * time.Hour))
	return Open(ctx, c.Dir, Options{Clock: clock, HeartbeatInterval: -1, AcquireWait: -1, NoAdmin: true,
		Sync: &SyncOptions{SpreadsheetID: stopsSheet, Provider: prov, Manual: true, PollingInterval: time.Minute, FullScanInterval: time.Minute}},
		Entity[Stop]("Stop"))
}

func adoptStops(ctx context.Context, s *Store) (AdoptReport, error) {
	return s.Adopt(ctx, AdoptOptions{Tab: stopsTab, Entity: "Stop", UnitSize: stopsUnit})
}

func runAdoptChild(cfg string) error {
	var c adoptChild
	if err := json.Unmarshal([]byte(cfg), &c); err != nil {
		return err
	}
	ctx := context.Background()
	s, err := openStops(ctx, c)
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = adoptStops(ctx, s)
	return err
}

// TestAdoptResumesAfterACrashBetweenUnits kills an adopting process
// (SIGKILL, failpoint adopt.after_unit) after its second unit: the log
// holds exactly those units; adopting again in a new process commits the
// rest, records nothing for the rows already adopted, and every key ends
// with exactly one entity.persisted of actor adopt; the tab is kept.
// Until it is, the store's Health names the adoption interrupted.
func TestAdoptResumesAfterACrashBetweenUnits(t *testing.T) {
	if !failpoint.Compiled {
		t.Skip("needs -tags failpoints")
	}
	emu := emulator.New(emulator.Options{AutoCreate: true})
	srv := httptest.NewServer(emu.Handler())
	defer srv.Close()
	const rows = 9 // 7 adopted (4 units of 2), 2 broken
	writeStops(t, emu, rows)
	c := adoptChild{Dir: t.TempDir(), Endpoint: srv.URL, Round: 0}
	cfg, _ := json.Marshal(c)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), adoptChildEnv+"="+string(cfg), failpoint.EnvVar+"="+failpoint.AdoptAfterUnit+"=crash@2")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !strings.Contains(string(out), "failpoint: adopt.after_unit crash") {
		t.Fatalf("the child was not killed at the failpoint: %v\n%s", err, out)
	}
	if got := adoptedBy(t, c.Dir); len(got) != 2*stopsUnit {
		t.Fatalf("after the crash the log holds %d adopted records, want %d: %v", len(got), 2*stopsUnit, got)
	}
	c.Round = 1
	s, err := openStops(context.Background(), c)
	mustT(t, err)
	if h := s.Health().Adoption; !errors.Is(h, ErrAdoptInterrupted) || !strings.Contains(h.Error(), `"Stops" (4 of 7 rows created)`) {
		t.Fatalf("Health().Adoption after the crash: %v", h)
	}
	rep, err := adoptStops(context.Background(), s)
	mustT(t, err)
	if h := s.Health().Adoption; h != nil {
		t.Fatalf("Health().Adoption once the adoption finished: %v", h)
	}
	mustT(t, s.Close())
	if rep.Unchanged != 2*stopsUnit || rep.Created != 3 || rep.Skipped != 2 || rep.Quarantined != 2 || !rep.Renamed {
		t.Fatalf("the resumed run: %+v", rep)
	}
	got := adoptedBy(t, c.Dir)
	for i := 1; i <= 7; i++ {
		if k := fmt.Sprintf("S%d", i); got[k] != 1 {
			t.Errorf("%s was adopted %d times, want once", k, got[k])
		}
	}
	if len(got) != 7 {
		t.Errorf("adopted %v, want S1–S7 once each", got)
	}
}

// writeStops types the tab: S1…S7, then a row without a key and one
// with a formula.
func writeStops(t *testing.T, emu *emulator.Emulator, rows int) {
	t.Helper()
	p := emu.Person(stopsSheet)
	if _, err := p.Displayed("Sheet1"); err != nil {
		t.Fatal(err)
	}
	mustT(t, p.RenameTab("Sheet1", stopsTab))
	cells := [][]string{{"code", "name", "seq"}}
	for i := 1; i <= rows-2; i++ {
		cells = append(cells, []string{fmt.Sprintf("S%d", i), fmt.Sprintf("Stop %d", i), fmt.Sprint(i)})
	}
	cells = append(cells, []string{"", "no key", "8"}, []string{"S9", "formula", "=1+8"})
	for r, row := range cells {
		for c, text := range row {
			if text != "" {
				mustT(t, p.Type(stopsTab, a1.CellLabel(r, c), text))
			}
		}
	}
}

// adoptedBy counts, per key, the entity.persisted events of actor adopt
// in dir's log (read-only).
func adoptedBy(t *testing.T, dir string) map[string]int {
	t.Helper()
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true})
	mustT(t, err)
	defer l.Close()
	out := map[string]int{}
	mustT(t, l.ReadFrom(1, func(e events.Event) error {
		if p, ok := e.Payload.(events.EntityPersisted); ok && p.Actor == events.ActorAdopt {
			out[p.ID]++
		}
		return nil
	}))
	return out
}
