package engine

import (
	"context"
	"database/sql"
	"errors"

	"github.com/hikoutei/hikoutei-go/events"
)

// txBatch is the open transaction of a transactional subscription.
type txBatch struct {
	tx   *sql.Tx
	n    int    // events handled in it
	last uint64 // the last of them
}

// deliverTx hands the events after the checkpoint to HandleTx, TxBatch
// events per read-model transaction, each committed with the checkpoint;
// a failure (or ctx ending) rolls back the open one.
func (r *subRun) deliverTx(ctx context.Context) error {
	var b txBatch
	err := r.e.Log().ReadFrom(r.cp+1, func(ev events.Event) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := r.handleTx(ctx, &b, ev); err != nil {
			return err
		}
		if b.n < r.c.TxBatch {
			return nil
		}
		return r.commitBatch(ctx, &b)
	})
	if err == nil {
		return r.commitBatch(ctx, &b)
	}
	if b.tx != nil {
		err = errors.Join(err, ignoreDone(b.tx.Rollback()))
	}
	return err
}

func (r *subRun) handleTx(ctx context.Context, b *txBatch, ev events.Event) (err error) {
	if b.tx == nil {
		// Not ctx: the run, not the context package, rolls back a batch.
		if b.tx, err = r.db.BeginTx(context.WithoutCancel(ctx), nil); err != nil {
			return r.writeFailed(err)
		}
	}
	defer r.recoverInto(ev, &err)
	if herr := r.c.HandleTx(ctx, b.tx, ev); herr != nil {
		return &SubscriptionError{Name: r.c.Name, Seq: ev.Seq, Err: herr}
	}
	b.n, b.last = b.n+1, ev.Seq
	return nil
}

// commitBatch commits the open transaction with the checkpoint.
func (r *subRun) commitBatch(ctx context.Context, b *txBatch) error {
	if b.tx == nil {
		return nil
	}
	tx, last := b.tx, b.last
	*b = txBatch{}
	if err := r.saveIn(context.WithoutCancel(ctx), tx, last); err != nil {
		return errors.Join(err, tx.Rollback())
	}
	return r.commit(tx, last)
}

// ignoreDone drops the error of rolling back a transaction already ended.
func ignoreDone(err error) error {
	if errors.Is(err, sql.ErrTxDone) {
		return nil
	}
	return err
}
