package store

import (
	"context"
	"time"

	"github.com/modelwire/modelwire/background"
)

// The commits of the write path: a flush commits the queued batch; exec
// commits the batch and a write of its own together; a failed commit puts
// the batch back at the front of the queue.

// exec runs fn in a transaction after everything queued, in the same
// commit: a session's start or an attempt's row costs one commit, not a
// flush and a commit. A failure of fn is the caller's to handle: unlike
// queued steps, fn is not kept for a retry, so nothing the caller was told
// failed is written later behind its back; the queued batch is then
// committed on its own, as flush would.
func (w *writer) exec(fn execOp) error {
	w.flushMu.Lock()
	defer w.flushMu.Unlock()
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return errClosed
	}
	b := w.take()
	w.mu.Unlock()
	batchDone := false
	committed, err := w.inTx(func(t *txn) error {
		if err := t.run(b.ops); err != nil {
			return err
		}
		batchDone = true
		return fn(t)
	})
	if err != nil && batchDone {
		// fn failed: the batch alone, as a flush would have committed it.
		fnErr := err
		committed, err = w.commit(b.ops)
		w.settle(b, committed, err)
		return fnErr
	}
	w.settle(b, committed, err)
	return err
}

// arm schedules the timed commit, in the background (w.mu held).
func (w *writer) arm() {
	w.timerArmed = true
	time.AfterFunc(w.interval, func() { background.Go(w.timerFlush) })
}

func (w *writer) timerFlush() {
	w.mu.Lock()
	w.timerArmed = false
	w.mu.Unlock()
	_ = w.flush() // kept in w.err for the next caller
}

// flush commits the batch. On failure the batch goes back to the front of
// the queue, to be retried by the next flush, and the error is returned
// (and kept for the next append).
func (w *writer) flush() error {
	w.flushMu.Lock()
	defer w.flushMu.Unlock()
	w.mu.Lock()
	if len(w.pending) == 0 {
		defer w.mu.Unlock()
		return w.err
	}
	b := w.take()
	w.mu.Unlock()
	committed, err := w.commit(b.ops)
	w.settle(b, committed, err)
	return err
}

// batch is the queue taken for one commit, with its arenas.
type batch struct {
	ops    []op
	steps  []stepOp
	events []byte
}

// take empties the queue into a batch (under mu and flushMu).
func (w *writer) take() batch {
	b := batch{w.pending, w.steps, w.events}
	w.pending, w.spare, w.pendingSteps, w.pendingBytes = w.spare, nil, 0, 0
	w.steps, w.events, w.spareSteps, w.spareEvents = w.spareSteps, w.spareEvents, nil, nil
	return b
}

// settle ends a commit of b (under flushMu): on failure b goes back to the
// front of the queue for the next flush and err is kept for the next
// append; on success its arrays are kept for reuse and the hook told.
func (w *writer) settle(b batch, committed map[int64]int, err error) {
	w.mu.Lock()
	if err != nil {
		if len(b.ops) > 0 {
			w.pending = append(b.ops, w.pending...)
			for _, o := range w.pending {
				if s, ok := o.(*stepOp); ok {
					w.pendingSteps++
					w.pendingBytes += len(s.raw.Data) + len(s.events) + 64
				}
			}
			w.err = err
			if !w.timerArmed && !w.closed {
				w.arm()
			}
		}
	} else {
		w.err = nil
		if w.spare == nil && b.ops != nil {
			clear(b.ops) // let the steps' bytes go
			w.spare = b.ops[:0]
		}
		if w.spareSteps == nil && b.steps != nil {
			clear(b.steps)
			w.spareSteps, w.spareEvents = b.steps[:0], b.events[:0]
		}
	}
	hook := w.afterCommit
	w.mu.Unlock()
	if err == nil && hook != nil {
		hook(committed)
	}
}

// commit runs a batch in one transaction.
func (w *writer) commit(batch []op) (map[int64]int, error) {
	return w.inTx(func(t *txn) error { return t.run(batch) })
}

// inTx runs fn in a write transaction on the writer's connection and
// returns the highest entry it committed per session. The caller holds
// flushMu.
func (w *writer) inTx(fn func(t *txn) error) (map[int64]int, error) {
	ctx := context.Background()
	t := &txn{w: w, ctx: ctx, open: map[int64]*chunkBuilder{}, attempts: map[int64]*attemptProgress{}, sessions: map[int64]*sessionProgress{}}
	if err := t.exec("BEGIN IMMEDIATE"); err != nil {
		return nil, err
	}
	if err := fn(t); err != nil {
		_ = t.exec("ROLLBACK")
		return nil, err
	}
	if err := t.exec("COMMIT"); err != nil {
		_ = t.exec("ROLLBACK")
		return nil, err
	}
	w.commits++
	out := make(map[int64]int, len(t.sessions))
	for sid, p := range t.sessions {
		out[sid] = p.lastSeq
	}
	return out, nil
}
