package natsbus

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/hikoutei/hikoutei-go/events"
)

// chainedRecord is the mirrored record of a sync.diverged event at seq
// linked to link.
func chainedRecord(t *testing.T, seq uint64, link events.ChainHash) []byte {
	t.Helper()
	ev := events.Event{Seq: seq, Stream: "sync/x", Version: seq, At: time.Unix(0, int64(seq)).UTC(), Epoch: 1, Commit: "c1",
		Payload: events.SyncDiverged{Target: "x", Reason: "r"}, Link: link}
	rec, err := MirrorRecord(ev)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// A mirror reader follows the chain from record to record: a link that
// is not the previous record's chain value, or a Hikoutei-Chain header
// that is not the record's own, is chain_broken at that record.
func TestI33_AMirrorReaderChecksEachLinkAndTheChainHeader(t *testing.T) {
	g := events.Genesis("s")
	r1 := chainedRecord(t, 1, g)
	c1, _, err := events.RecordChainValue(r1)
	if err != nil {
		t.Fatal(err)
	}
	good, bad := chainedRecord(t, 2, c1), chainedRecord(t, 2, g)
	for _, tc := range []struct {
		name   string
		second []byte
		header string
		broken bool
	}{{"linked", good, "", false}, {"wrong link", bad, "", true}, {"wrong header", good, c1.String(), true}} {
		v := &chainVerifier{}
		ev1, _ := events.DecodeRecord(1, r1)
		if err := v.checkChain(1, 1, ev1, nats.Header{}, r1); err != nil {
			t.Fatal(err)
		}
		v.last, v.n = 1, 1
		ev2, _ := events.DecodeRecord(2, tc.second)
		h := nats.Header{}
		if tc.header != "" {
			h.Set(HeaderChain, tc.header)
		}
		err := v.checkChain(2, 2, ev2, h, tc.second)
		if got := errors.Is(err, events.ErrChainBroken); got != tc.broken {
			t.Fatalf("%s: %v", tc.name, err)
		}
	}
}
