package projector

import (
	"fmt"
	"strconv"

	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/events"
)

// A read model being built (Options.Build) keeps its transaction open
// across batches and commits once at least buildTxEvents events are in
// it, and once more in CloseBuilt: a batch of 2,048 events (the engine's
// read size) was a commit of its own, and each commit wrote every page
// the batch had dirtied, so the pages its scattered keys share (and the
// b-trees' upper levels) were written again and again. Nothing of what
// the file holds once built changes; there are fewer commits, so fewer
// page writes and background syncs. The file is private and discarded
// after any failure, as before (Options.Build), so a transaction left
// open by a crash leaves nothing anybody reads.

// buildTxEvents is how many events a building read model's transaction
// applies at least before it commits.
var buildTxEvents = 16384

// buildTx is the open transaction of a building read model.
type buildTx struct {
	open   bool   // BEGIN was run and neither COMMIT nor ROLLBACK since
	events int    // events applied since BEGIN
	from   uint64 // the checkpoint the last commit left
}

// applyBuilding is ApplyKnown on a building read model: evs join the
// open transaction, which commits once it holds buildTxEvents events.
// Errors: ErrProjection, with the transaction rolled back and the
// checkpoint back at the last commit's (the file is discarded).
func (p *Projector) applyBuilding(evs []events.Event, known []KnownHashes) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w: %w", ErrProjection, corruption(err))
			p.abortBuilding()
		}
	}()
	if !p.tx.open {
		if err := sqlitex.ExecuteTransient(p.conn, "BEGIN IMMEDIATE", nil); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		p.tx = buildTx{open: true, from: p.checkpoint}
	}
	if err := p.applyAll(evs, known); err != nil {
		return err
	}
	if p.tx.events += len(evs); p.tx.events < buildTxEvents {
		return nil
	}
	return p.commitBuilding()
}

// commitBuilding commits the open transaction, if any, with the
// checkpoint reached, and asks for a background sync of what it wrote.
func (p *Projector) commitBuilding() error {
	if !p.tx.open {
		return nil
	}
	if err := p.setMeta("checkpoint", strconv.FormatUint(p.checkpoint, 10)); err != nil {
		return err
	}
	if err := sqlitex.ExecuteTransient(p.conn, "COMMIT", nil); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	p.tx = buildTx{from: p.checkpoint}
	p.wb.nudge()
	return nil
}

// abortBuilding rolls the open transaction back after a failure.
func (p *Projector) abortBuilding() {
	if p.tx.open && !p.conn.AutocommitEnabled() {
		_ = sqlitex.ExecuteTransient(p.conn, "ROLLBACK", nil) // the file is discarded: its state does not matter
	}
	p.checkpoint = p.tx.from
	p.tx = buildTx{from: p.checkpoint}
	p.bulk.drop()
	clear(p.moved)
}
