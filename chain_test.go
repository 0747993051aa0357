package hikoutei_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/fixtures"
)

// A store's chain head, taken while it runs, is extended by every later
// commit: Verify of the open store checks it, and so does VerifyDir of
// the closed directory; a head that is not the log's fails as a pin.
func TestI33_AStoresPinnedHeadVerifiesAfterMoreCommits(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := hikoutei.Open(ctx, dir, hikoutei.Options{Logger: slog.New(slog.DiscardHandler)}, hikoutei.Entity[fixtures.Airport]("Airport"))
	if err != nil {
		t.Fatal(err)
	}
	rows := fixtures.Airports(t)[:80]
	commitRows(t, s, rows[:40])
	pin, err := s.ChainHead()
	if err != nil || pin.Seq == 0 {
		t.Fatalf("chain head %v: %v", pin, err)
	}
	commitRows(t, s, rows[40:])
	var calls int
	rep, err := s.Verify(ctx, hikoutei.VerifyOptions{Pin: &pin, Progress: func(done, total uint64) { calls++ }})
	if err != nil || !rep.Pinned || rep.Head <= pin.Seq || calls == 0 {
		t.Fatalf("verify with the pin %v: %+v, %d progress calls, %v", pin, rep, calls, err)
	}
	head, err := s.ChainHead()
	if err != nil || head.Seq != rep.Head || head.Hash != rep.HeadHash {
		t.Fatalf("chain head %v, verified %d:%s (%v)", head, rep.Head, rep.HeadHash, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := hikoutei.VerifyDir(ctx, dir, hikoutei.VerifyOptions{Pin: &pin}); err != nil {
		t.Fatalf("the closed store: %v", err)
	}
	wrong := pin
	wrong.Hash[0] ^= 1
	if _, err := hikoutei.VerifyDir(ctx, dir, hikoutei.VerifyOptions{Pin: &wrong}); !errors.Is(err, hikoutei.ErrChainPinMismatch) {
		t.Fatalf("a pin the log does not extend: %v", err)
	}
}
