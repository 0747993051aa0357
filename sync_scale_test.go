//go:build !race

package hikoutei

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// Wide is an 8-field entity for the payload-size case.
type Wide struct {
	ID string `hikoutei:"id,pk"`
	A  string `hikoutei:"a"`
	B  string `hikoutei:"b"`
	C  string `hikoutei:"c"`
	D  int64  `hikoutei:"d"`
	E  float64
	F  bool
	G  string `hikoutei:"g"`
}

// TestC09_LargeBackfillIsChunkedSplitOnSizeErrorsAndResumesWithoutDuplicates
// backfills 20,000 records × 8 fields through an emulator that rejects
// bodies over 1 MB with 413, with a crash (close without settling) midway.
func TestC09_LargeBackfillIsChunkedSplitOnSizeErrorsAndResumesWithoutDuplicates(t *testing.T) {
	emu := emulator.New(emulator.Options{AutoCreate: true, MaxRequestBytes: 1 << 20})
	srv := httptest.NewServer(emu.Handler())
	defer srv.Close()
	dir := t.TempDir()
	open := func() *synced {
		x := openWide(t, dir, emu, srv.URL)
		return x
	}
	x := open()
	for i := 0; i < 20000; i += 1000 {
		u := x.Begin()
		for j := i; j < i+1000; j++ {
			mustT(t, u.Persist(&Wide{ID: fmt.Sprintf("w%05d", j), A: "alpha-" + fmt.Sprint(j), B: "=not a formula", C: "00123",
				D: int64(j) * 1000003, E: float64(j) / 7, F: j%2 == 0, G: "payload payload payload payload payload"}))
		}
		_, err := u.Commit(ctx)
		mustT(t, err)
	}
	x.pass() // one batch of 5,000 lands…
	claimed, err := x.Claim("sheets", 5000)
	mustT(t, err)
	if len(claimed) != 5000 {
		t.Fatalf("claimed %d", len(claimed))
	}
	mustT(t, x.Close()) // …then the process dies holding 5,000 claims
	y := open()
	_, err = y.RecoverProcessing("sheets", y.Now())
	mustT(t, err)
	y.clock.Advance(time.Minute)
	y.drain()
	rows := y.rows("Wide_System")
	seen := map[string]bool{}
	for _, r := range rows[1:] {
		anchor := r[len(r)-1]
		if seen[anchor] {
			t.Fatalf("duplicate row for %s", anchor)
		}
		seen[anchor] = true
	}
	if len(seen) != 20000 {
		t.Fatalf("%d rows in the sheet, want 20000", len(seen))
	}
	t.Logf("dispatches %d", y.disp.C.Dispatches.Load())
}

func openWide(t *testing.T, dir string, emu *emulator.Emulator, url string) *synced {
	t.Helper()
	prov, err := sheetsio.New(ctx, sheetsio.Config{Endpoint: url, Pacing: sheetsio.Pacing{ReadInterval: -1, WriteInterval: -1},
		LookupEnv: func(string) (string, bool) { return "", false }})
	mustT(t, err)
	clock := newTestClock()
	s, err := Open(dir, Options{Clock: clock, HeartbeatInterval: -1, AcquireWait: -1, LeaseTTL: testLeaseTTL,
		Sync: &SyncOptions{SpreadsheetID: sheetID, Provider: prov, Manual: true, MaxBatch: 5000}}, Entity[Wide]("Wide"))
	mustT(t, err)
	t.Cleanup(func() { s.Close() })
	disp, err := s.Provision(ctx)
	mustT(t, err)
	return &synced{Store: s, t: t, emu: emu, prov: prov, clock: clock, disp: disp}
}
