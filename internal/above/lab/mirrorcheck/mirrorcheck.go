// Package mirrorcheck is the campaigns' check of the NATS event mirror
// (I36): after quiescence, the stream a store mirrors its log to holds
// every committed record, in order, up to the log's head, and verifies as
// an auditor reads it (signature, sequence, hash chain), ending at the
// log's chain head.
package mirrorcheck

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/internal/natsbus"
	"github.com/hikoutei/hikoutei-go/natsserver"
)

// Options adds to o the embedded NATS server with the event mirror and a
// loopback listener (authenticated with the store's generated client
// seed) that Check reads the stream through.
func Options(o hikoutei.Options) hikoutei.Options {
	o.NATSServer = natsserver.Embedded()
	o.NATS = &hikoutei.NATSOptions{Mirror: true, Listen: "127.0.0.1:0"}
	return o
}

// Result is what Check saw.
type Result struct {
	LogHead  uint64 // the log's head when the mirror reached it
	Mirrored uint64 // the last log seq the mirror stream holds
	Records  int    // records the reader verified
	Took     time.Duration
}

// String is "mirror_head=M log_head=H".
func (r Result) String() string {
	return fmt.Sprintf("mirror_head=%d log_head=%d", r.Mirrored, r.LogHead)
}

// Check waits, bounded by timeout, until the mirror of s (opened with
// Options) holds the log's head, with no commit in between, then reads
// the whole stream through the store's listener as an auditor does
// (natsbus.ReadMirrorReport, the mirror key pinned): every record from
// seq 1 in order, signed, chained, the last one the log's head with the
// log's chain value. Errors: the mirror did not reach the head in time;
// the stream does not verify or does not end at the log's head.
func Check(ctx context.Context, s *hikoutei.Store, timeout time.Duration) (Result, error) {
	e := engine.Of(s)
	bus := e.Bus()
	if bus == nil || bus.MirrorStream() == "" {
		return Result{}, fmt.Errorf("the store runs no event mirror")
	}
	start := time.Now()
	var head events.ChainPin
	for {
		var err error
		if head, err = e.ChainHead(); err != nil {
			return Result{}, err
		}
		if bus.MirroredHead() == head.Seq {
			break
		}
		if time.Since(start) > timeout {
			h := s.Health()
			return Result{LogHead: head.Seq, Mirrored: bus.MirroredHead()}, fmt.Errorf("the mirror holds seq %d, the log's head is %d after %s (health: mirror %v, lag %+v)",
				bus.MirroredHead(), head.Seq, timeout, h.Mirror, h.MirrorLag)
		}
		select {
		case <-ctx.Done():
			return Result{}, ctx.Err()
		case <-time.After(20 * time.Millisecond): // polls a condition, bounded by timeout
		}
	}
	res := Result{LogHead: head.Seq, Mirrored: head.Seq, Took: time.Since(start)}
	cfg := natsbus.Config{URL: bus.ListenURL(), NkeyFile: filepath.Join(e.Dir(), engine.ClientSeedFile),
		Mirror: natsbus.MirrorConfig{VerifyKey: bus.MirrorKey()}}
	next := uint64(1)
	holes, err := e.Log().Holes()
	if err != nil {
		return res, err
	}
	rep, err := natsbus.ReadMirrorReport(ctx, cfg, bus.MirrorStream(), func(ev events.Event) error {
		for holes.Contains(next) {
			next++
		}
		if ev.Seq != next {
			return fmt.Errorf("the stream's record after seq %d is seq %d", next-1, ev.Seq)
		}
		if ev.Seq == head.Seq+1 && !ev.Link.IsZero() && ev.Link != head.Hash {
			return fmt.Errorf("the mirror's record %d links to %s, the log's chain value at %d is %s", ev.Seq, ev.Link, head.Seq, head.Hash)
		}
		next++
		return nil
	})
	res.Records = rep.Records
	switch {
	case err != nil:
		return res, fmt.Errorf("the mirror stream does not verify: %w", err)
	case rep.Last < head.Seq:
		return res, fmt.Errorf("the mirror stream ends at seq %d, the log's head is %d", rep.Last, head.Seq)
	case rep.ChainSeq == head.Seq && rep.Chain != head.Hash:
		return res, fmt.Errorf("the mirror's chain value at seq %d is %s, the log's %s", head.Seq, rep.Chain, head.Hash)
	}
	return res, nil
}
