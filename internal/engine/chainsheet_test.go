package engine_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// sheetPin reads the chain head the authority tab publishes, as a third
// party would (the real client over HTTP, and the text a person sees in
// its chain_head cell), parsed as `audit verify --pin` parses it.
func (x *synced) sheetPin() (string, hikoutei.ChainPin) {
	x.t.Helper()
	a, err := x.prov.ReadAuthority(ctx, x.wb)
	mustT(x.t, err)
	rows := x.rows(layout.AuthorityTab)
	col := slices.Index(rows[0], layout.AuthorityChainHead)
	if len(rows) < 2 || col < 0 || col >= len(rows[1]) || rows[1][col] != a.Head.String() {
		x.t.Fatalf("authority tab %q, head read %v", rows, a.Head)
	}
	h, ok := sheetsio.ParseChainHead(rows[1][col])
	hash, err := events.ParseChainHash(h.Hash)
	if !ok || err != nil || h.Seq == 0 {
		x.t.Fatalf("chain_head cell %q: %v", rows[1][col], err)
	}
	return rows[1][col], hikoutei.ChainPin{Seq: h.Seq, Hash: hikoutei.ChainHash(hash)}
}

func toAny(rows []Airport) []any {
	out := make([]any, len(rows))
	for i := range rows {
		out[i] = &rows[i]
	}
	return out
}

// The authority tab carries the store's chain head after each dispatch:
// it verifies as a pin, moves forward with later commits and dispatches,
// and no longer verifies once the log is rewritten under it.
func TestI33_TheAuthorityTabPublishesTheChainHeadAtEachDispatch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	x := openSynced(t, dir)
	all := readAirports(t)
	commit(t, x.Store, toAny(all[:5])...)
	x.drain()
	text, first := x.sheetPin()
	if rep, err := x.Verify(ctx, hikoutei.VerifyOptions{Pin: &first}); err != nil || !rep.Pinned {
		t.Fatalf("the sheet's head %s as a pin: %+v, %v", text, rep, err)
	}
	commit(t, x.Store, toAny(all[5:10])...)
	x.drain()
	_, later := x.sheetPin()
	if later.Seq <= first.Seq {
		t.Fatalf("the sheet's head stayed at %d after more commits and a dispatch (was %d)", later.Seq, first.Seq)
	}
	mustT(t, x.Close())
	if _, err := hikoutei.VerifyDir(ctx, dir, hikoutei.VerifyOptions{Pin: &later}); err != nil {
		t.Fatalf("the closed store against the sheet's head: %v", err)
	}
	rewriteRecord(t, filepath.Join(dir, events.LogFileName), first.Seq)
	_, err := hikoutei.VerifyDir(ctx, dir, hikoutei.VerifyOptions{Pin: &later})
	if !errors.Is(err, hikoutei.ErrChainBroken) && !errors.Is(err, hikoutei.ErrChainPinMismatch) {
		t.Fatalf("a rewritten log against the sheet's head: %v", err)
	}
}

// rewriteRecord edits one byte in the middle of the stored record seq.
func rewriteRecord(t *testing.T, path string, seq uint64) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	mustT(t, err)
	defer db.Close()
	key := []byte{byte(seq >> 56), byte(seq >> 48), byte(seq >> 40), byte(seq >> 32), byte(seq >> 24), byte(seq >> 16), byte(seq >> 8), byte(seq)}
	mustT(t, db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("events"))
		v := append([]byte(nil), b.Get(key)...)
		v[len(v)/2] ^= 0x20
		return b.Put(key, v)
	}))
}

// F3: a person who types a SEQ:HASH past the log's head into the
// authority tab's chain_head cell freezes nothing: the next dispatch
// rewrites it with the log's head (a pin that verifies), and sync health
// reports the cell ahead (warning chain_head_ahead, sync not failing) for
// an hour after the last dispatch that found it.
func TestF3_AChainHeadCellTypedPastTheLogIsRewrittenAndReported(t *testing.T) {
	t.Parallel()
	x := openSynced(t, t.TempDir())
	all := readAirports(t)
	commit(t, x.Store, toAny(all[:5])...)
	x.drain()
	typed := "999999999:" + strings.Repeat("0", 64)
	mustT(t, x.sheet.Person().Type(layout.AuthorityTab, "E2", typed))
	for i := range 2 {
		changed := slices.Clone(all[:5]) // updates: the dispatch reads the sheet first
		for j := range changed {
			changed[j].Name += fmt.Sprintf(" (%d)", i)
		}
		commit(t, x.Store, toAny(changed)...)
		x.drain()
		text, pin := x.sheetPin()
		if text == typed || pin.Seq > x.head() {
			t.Fatalf("dispatch %d: the chain_head cell still shows %s (log head %d)", i+1, text, x.head())
		}
		if rep, err := x.Verify(ctx, hikoutei.VerifyOptions{Pin: &pin}); err != nil || !rep.Pinned {
			t.Fatalf("dispatch %d: the sheet's head %s as a pin: %+v, %v", i+1, text, rep, err)
		}
		h := x.Health()
		ahead := h.SyncHealth != nil && slices.ContainsFunc(h.SyncHealth.Warnings, func(w hikoutei.SyncWarning) bool {
			return w.Reason == hikoutei.ReasonChainHeadAhead && strings.Contains(w.Detail, "999999999")
		})
		if !ahead || h.SyncHealth.Failing() || h.Sync != nil {
			t.Fatalf("dispatch %d after the rewrite: health %+v (want the chain_head_ahead warning, sync not failing)", i+1, h.SyncHealth)
		}
	}
	x.clock.Advance(61 * time.Minute)
	if h := x.Health(); len(h.SyncHealth.Warnings) != 0 {
		t.Fatalf("an hour after the last sighting the warning stands: %+v", h.SyncHealth.Warnings)
	}
}
