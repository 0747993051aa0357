package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/segstore"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// ChainHead is the store's hash chain head for a third party to pin: the
// last record's sequence and the chain value after it. The dispatcher
// publishes it in the spreadsheet's authority tab at each dispatch
// (sheetChainHead); after each commit batch it is published on NATS
// (publishChainHead). Errors: the log's (ErrLogClosed, *LogCorruptError).
func (e *Engine) ChainHead() (events.ChainPin, error) {
	p, err := e.Log().ChainHead()
	return p, closedAsStore(err)
}

// closedAsStore reports a closed log as ErrStoreClosed.
func closedAsStore(err error) error {
	if errors.Is(err, events.ErrLogClosed) {
		return fmt.Errorf("%w: %w", ErrStoreClosed, err)
	}
	return err
}

// VerifyChain walks the store's hash chain (events.Log.VerifyChain); a
// walk that passes records the log's chain checkpoint at its end.
func (e *Engine) VerifyChain(ctx context.Context, opts events.ChainVerifyOptions) (*events.ChainReport, error) {
	rep, err := e.Log().VerifyChain(ctx, opts)
	if err == nil {
		e.recordChainCheckpoint(rep)
	}
	return rep, closedAsStore(err)
}

// VerifyChainDir verifies the hash chain of the log of the store in dir,
// opened read-only (it never writes), its sealed segments in segs (nil:
// its segments folder). Errors: ErrNotAStore; the log's
// open errors (*StoreLockedError while a writer holds it), except that a
// head that disagrees with the last record is *ChainBrokenError naming
// the sequence; VerifyChain's.
func VerifyChainDir(ctx context.Context, dir string, segs segstore.Store, opts events.ChainVerifyOptions) (*events.ChainReport, error) {
	path := filepath.Join(dir, events.LogFileName)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%w: %s has no %s", ErrNotAStore, dir, events.LogFileName)
	}
	l, err := events.OpenLog(path, events.Options{ReadOnly: true, Segments: segs})
	if err != nil {
		return nil, headAsChainBreak(events.DescribeLocked(dir, err))
	}
	defer l.Close()
	return l.VerifyChain(ctx, opts)
}

// headAsChainBreak reports a log that does not open because its head and
// its last record disagree (the last records removed, or a record past
// the head) as the chain broken at the sequence concerned, which is what
// a walk of the chain finds there; other errors pass unchanged.
func headAsChainBreak(err error) error {
	var lc *events.LogCorruptError
	if !errors.As(err, &lc) || lc.Check != events.CheckHead || lc.Seq == 0 {
		return err
	}
	return &events.ChainBrokenError{Seq: lc.Seq, Reason: lc.Detail}
}

// headShown records what the spreadsheet's chain_head cell showed a
// dispatch that published head (effects.Config.HeadShown): a cell past
// the log's head is reported (sync health warning chain_head_ahead, a log
// line) until a later dispatch finds it fixed.
func (e *Engine) headShown(shown, head sheetsio.ChainHead) {
	if shown.Seq > head.Seq {
		e.log.Warn("the spreadsheet's chain_head cell showed a head past the log's (someone typed it); rewritten with the log's head",
			"code", string(ReasonChainHeadAhead), "shown_seq", shown.Seq, "log_head", head.Seq)
	}
	e.notes.noteHead(shown, head, e.cfg.Clock.Now())
}

// sheetChainHead is ChainHead in the form the dispatcher publishes in the
// authority tab (effects.Config.ChainHead).
func (e *Engine) sheetChainHead() (sheetsio.ChainHead, error) {
	p, err := e.ChainHead()
	return sheetsio.ChainHead{Seq: p.Seq, Hash: p.Hash.String()}, err
}
