package engine_test

import (
	"errors"
	"path/filepath"
	"sync"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/internal/natsbus"
)

// With NATS, every commit batch publishes the log's chain head on
// chain.head, and the head a subscriber receives verifies as a pin; the
// mirror's records carry their chain value (Hikoutei-Chain), and a reader
// of the mirror verifies each link up to the log's head.
func TestI33_TheChainHeadIsPublishedAfterCommitsAndTheMirrorCarriesTheChain(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, func(o *hikoutei.Options) { o.NATS = &hikoutei.NATSOptions{Mirror: true, Listen: "127.0.0.1:0"} })
	defer s.Close()
	e := engine.Of(s)
	var mu sync.Mutex
	var last natsbus.ChainHeadNotification
	stop, err := e.Bus().SubscribeChainHeads(func(n natsbus.ChainHeadNotification) { mu.Lock(); last = n; mu.Unlock() })
	mustT(t, err)
	defer stop()
	loadAirports(t, s, 30)
	head, err := s.ChainHead()
	mustT(t, err)
	eventually(t, "the chain head published", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return last.Seq == head.Seq && last.Hash == head.Hash.String()
	})
	pin, err := last.Pin()
	mustT(t, err)
	if _, err := s.Verify(ctx, hikoutei.VerifyOptions{Pin: &hikoutei.ChainPin{Seq: pin.Seq, Hash: hikoutei.ChainHash(pin.Hash)}}); err != nil {
		t.Fatalf("the published head as a pin: %v", err)
	}
	for _, m := range mirrorHolds(t, dir, e, head.Seq) {
		c, ok, err := events.RecordChainValue(m.Data)
		if err != nil || !ok || m.Header.Get(natsbus.HeaderChain) != c.String() {
			t.Fatalf("mirror message %d: header %q, chain value %v (%v)", m.Sequence, m.Header.Get(natsbus.HeaderChain), c, err)
		}
	}
	reader, stream := mirrorReader(dir, e), "HIKOUTEI_"+natsbus.SanitizeStore(filepath.Base(dir))
	rep, err := natsbus.ReadMirrorReport(ctx, reader, stream, func(events.Event) error { return nil })
	if err != nil || rep.ChainSeq < head.Seq {
		t.Fatalf("mirror read: %+v, %v", rep, err)
	}
	if rep.ChainSeq == head.Seq && hikoutei.ChainHash(rep.Chain) != head.Hash {
		t.Fatalf("the mirror's chain value at %d is %v, the log's %v", head.Seq, rep.Chain, head.Hash)
	}
}

// A store's Verify on a closed store is ErrStoreClosed.
func TestVerifyOfAClosedStoreIsStoreClosed(t *testing.T) {
	s := openStore(t, t.TempDir())
	mustT(t, s.Close())
	if _, err := s.Verify(ctx, hikoutei.VerifyOptions{}); !errors.Is(err, hikoutei.ErrStoreClosed) {
		t.Fatalf("verify after close: %v", err)
	}
}
