//go:build !race

package engine_test

import (
	"fmt"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
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
// bodies over 1 MB (400, as Google refuses one over 10 MiB), with a crash (close without settling) midway.
func TestC09_LargeBackfillIsChunkedSplitOnSizeErrorsAndResumesWithoutDuplicates(t *testing.T) {
	sheet := serveSheet(t, emulator.New(emulator.Options{AutoCreate: true, MaxRequestBytes: 1 << 20}), nil, plainProvider)
	dir := t.TempDir()
	open := func(sheet *hikouteitest.Sheet) *synced {
		return openSyncedOn(t, dir, sheet, nil, []hikoutei.EntityDef{hikoutei.Entity[Wide]("Wide")}, func(o *hikoutei.SyncOptions) {
			o.MaxBatch = 5000
			o.ProbeDelay, o.MaxProbes, o.AuthorityTTL = 0, 0, 0 // the defaults
		})
	}
	x := open(sheet)
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
	claimed, err := x.e.Claim(x.e.Target(), 5000)
	mustT(t, err)
	if len(claimed) != 5000 {
		t.Fatalf("claimed %d", len(claimed))
	}
	mustT(t, x.Close()) // …then the process dies holding 5,000 claims
	y := open(restarted(t, sheet, plainProvider))
	_, err = y.e.RecoverProcessing(y.e.Target(), y.e.Now())
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
