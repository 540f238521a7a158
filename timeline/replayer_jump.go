package timeline

import (
	"errors"
	"fmt"
	"slices"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
)

// Jumping in a replay: long sessions folded from their turns' records,
// and the checkpoints a step back or a jump replays from.

// long reports whether the session is long enough that a replay keeps
// only the shown turn's detail (detailedUpTo).
func (r *Replayer) long() bool { return r.n > detailedUpTo }

// baseTurn is, in a long session, the last turn whose first entry is at
// or before p; 0 when there is none or the session is not long. (Its
// skeleton is opened: at the position before that entry the state still
// shows the turn before, in detail.)
func (r *Replayer) baseTurn(p int) int {
	if !r.long() {
		return 0
	}
	t, _ := slices.BinarySearch(r.turnStarts, p+1)
	return t
}

// turnRecord is what the attempts' records say of a turn's response: the
// last terminal status, usage and timings among its attempts.
type turnRecord struct {
	terminal *adapters.Event
	usage    *adapters.Usage
	timings  *session.Timings
}

// records collects the turns' records from the attempts (in turn and
// attempt order: the last one wins, as in the fold).
func (r *Replayer) records() {
	atts := r.sess.Attempts
	if len(atts) > 0 {
		// A capacity, not a length: the turn is a stored number, and the
		// attempts are what the session holds.
		r.turns = make([]turnRecord, 0, min(atts[len(atts)-1].Turn, len(atts)))
	}
	// The records are read, never changed: turns that ended alike share
	// their terminal event, and the timings are one slice.
	terminals := map[[2]string]*adapters.Event{}
	timings := make([]session.Timings, len(atts))
	for i, a := range atts {
		if a.Turn < 1 {
			continue
		}
		for len(r.turns) < a.Turn {
			r.turns = append(r.turns, turnRecord{})
		}
		tr := &r.turns[a.Turn-1]
		if a.TerminalStatus != "" {
			k := [2]string{string(a.TerminalStatus), string(a.StopReason)}
			if terminals[k] == nil {
				terminals[k] = &adapters.Event{Type: adapters.EvTerminal, Status: a.TerminalStatus, StopReason: a.StopReason}
			}
			tr.terminal = terminals[k]
		}
		if a.Usage != nil {
			tr.usage = a.Usage
		}
		if a.LastSeq > 0 {
			timings[i] = *timingsOf(a.Timings)
			tr.timings = &timings[i]
		}
	}
}

// turnAt is turn t's record so far (zero when none).
func (r *Replayer) turnAt(t int) turnRecord {
	if t >= 1 && t <= len(r.turns) {
		return r.turns[t-1]
	}
	return turnRecord{}
}

// skeleton folds a long session up to turn t's start — position
// turnStarts[t-1]-1, with the updates before turn t's first entry, those
// that open turn t included: a state for the positions from turn t's
// first entry on (opened) — from
// the records alone: the attempts (their assembly, attempt and response
// updates) and the session-level entries, never the responses' events.
// Only what a long session keeps of an earlier turn comes out of those
// events, and settle takes it from the records in every fold, so the
// state equals the fold from the start. Two entries are read: those
// around the start, for their times.
func (r *Replayer) skeleton(t int) (*timelineBuilder, error) {
	start := r.turnStarts[t-1]
	r.skipped++
	// From the last checkpoint at a turn start before, if any: the turns
	// before it are shared with it rather than made again (a skeleton's
	// checkpoint would otherwise hold a copy of every turn).
	b, from := r.newBuilder(), 1
	if cp := r.turnCheckpoint(start - 1); cp != nil {
		b, from = cp.clone(), cp.pos+1
		b.answered = false
	}
	si, _ := slices.BinarySearchFunc(r.session, from, func(e sessEntry, seq int) int { return e.seq - seq })
	ai, _ := slices.BinarySearchFunc(r.byFirst, from, func(i, seq int) int { return r.sess.Attempts[i].FirstSeq - seq })
	for _, i := range r.byFirst[ai:] {
		a := &r.sess.Attempts[i]
		if a.FirstSeq >= start {
			break
		}
		for ; si < len(r.session) && r.session[si].seq < a.FirstSeq; si++ {
			b.skipSession(r.session[si])
		}
		b.before(store.Entry{Seq: a.FirstSeq, Turn: a.Turn, Attempt: a.Attempt}, true)
		if tr := r.turnAt(a.Turn); tr.terminal != nil {
			b.terminal = setTurn(b.terminal, a.Turn, tr.terminal)
		}
		b.pos = max(b.pos, a.LastSeq)
	}
	for ; si < len(r.session) && r.session[si].seq < start; si++ {
		b.skipSession(r.session[si])
	}
	if b.answered {
		return nil, errNoSkeleton
	}
	es, err := r.db.Events(r.sess.ID, max(1, start-1), 2)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(es, func(e store.Entry) bool { return e.Seq == start })
	if i < 0 {
		return nil, fmt.Errorf("entry %d: not in the timeline", start)
	}
	e := es[i]
	if i > 0 {
		b.at = r.at(es[i-1])
	}
	b.pos = start - 1
	if _, err := b.before(e, true); err != nil {
		return nil, fmt.Errorf("entry %d: %w", e.Seq, err)
	}
	b.prelude, b.next, b.hasNext = start, r.at(e), true
	return b, nil
}

// turnCheckpoint is the last checkpoint at or before p that is at a turn
// start — the position just before a turn's first entry: a skeleton's,
// or one keep took there — nil if none.
func (r *Replayer) turnCheckpoint(p int) *timelineBuilder {
	var best *timelineBuilder
	for _, l := range [][]*timelineBuilder{r.cps, r.fine} {
		i, _ := slices.BinarySearchFunc(l, p+1, byPos)
		for i--; i >= 0; i-- {
			if c := l[i]; !c.partial {
				if _, ok := slices.BinarySearch(r.turnStarts, c.pos+1); ok {
					if best == nil || c.pos > best.pos {
						best = c
					}
					break
				}
			}
		}
	}
	return best
}

// skipSession folds a session-level entry in a skeleton, as advance does.
func (b *timelineBuilder) skipSession(se sessEntry) {
	b.beforeSession(se, true)
	b.prelude = se.seq
	b.applySession(se)
	b.pos = se.seq
}

// errNoSkeleton: the turns before cannot be folded from the records — a
// verdict among them took the answer shown then, which only the
// entries hold (finalAnswer) — so they are folded from their entries.
var errNoSkeleton = errors.New("no skeleton")

// settle makes a long session's turns before the shown one what the
// records say they were — their lanes and event log dropped, their
// terminal, usage and timings from the attempts' records — whether they
// were folded from their entries or skipped (skeleton), so that the two
// agree; the counts of updates and events restart with the shown turn.
func (b *timelineBuilder) settle() {
	st := b.st
	for i := b.settled; i < len(st.Turns)-1; i++ {
		t := st.Turn(i + 1)
		tr := b.r.turnAt(i + 1)
		t.DropDetail()
		t.Terminal, t.Usage, t.Timings = tr.terminal, tr.usage, tr.timings
		if t.Summary != nil {
			sum := *t.Summary
			sum.Terminal, sum.StopReason, sum.ProviderStopReason = adapters.StatusUnknown, adapters.StopUnknown, ""
			if tr.terminal != nil {
				sum.Terminal, sum.StopReason = tr.terminal.Status, tr.terminal.StopReason
			}
			t.Summary = &sum
		}
	}
	b.settled = max(b.settled, len(st.Turns)-1)
	st.Applied, st.Events = 0, 0
}

// byPos orders checkpoints by position.
func byPos(c *timelineBuilder, p int) int { return c.pos - p }

// checkpoint is the last checkpoint at or before p that p's state may be
// folded from (one at p that opened the next turn may not), nil if none.
func (r *Replayer) checkpoint(p int) *timelineBuilder {
	var best *timelineBuilder
	for _, l := range [][]*timelineBuilder{r.cps, r.fine} {
		i, _ := slices.BinarySearchFunc(l, p+1, byPos)
		if i > 0 && l[i-1].pos == p && l[i-1].opened() {
			i--
		}
		if i > 0 && (best == nil || l[i-1].pos > best.pos) {
			best = l[i-1]
		}
	}
	return best
}

// opened reports whether b has folded what opens the turn of the entry
// after pos (its assembly: b is at a turn start, its prelude folded),
// which the state at pos does not show: b serves the positions after pos
// only. Position 0 shows the first turn's request.
func (b *timelineBuilder) opened() bool {
	if b.pos == 0 || b.partial || b.prelude != b.pos+1 {
		return false
	}
	_, start := slices.BinarySearch(b.r.turnStarts, b.prelude)
	return start
}

// keep takes a checkpoint of b, folded to the end of an entry group, when
// the last one before it is far enough. A checkpoint holds the event log
// of the turn it is in (a long session's state keeps no other), so they
// are taken where a turn starts (turnStart: b has folded the turn's
// assembly), half an interval apart; inside a turn only when the next
// turn's start is an interval away or more.
func (r *Replayer) keep(b *timelineBuilder, turnStart bool) {
	add := func(l []*timelineBuilder, every int) ([]*timelineBuilder, bool) {
		i, _ := slices.BinarySearchFunc(l, b.pos+1, byPos)
		if i < len(l) && l[i].pos-b.pos < every/2 {
			return l, false // the one after is near
		}
		if !turnStart && r.NextTurnFrom(b.pos)-b.pos < every {
			return l, false
		} else if turnStart {
			every /= 2
		}
		if (i > 0 && b.pos-l[i-1].pos < every) || (i == 0 && b.pos < every) {
			return l, false
		}
		return slices.Insert(l, i, b.clone()), true
	}
	var added bool
	if r.cps, added = add(r.cps, r.every); added && len(r.cps) > r.most() {
		r.thin()
	}
	if !added && b.pos >= r.fineFrom && b.pos < r.fineTo {
		r.fine, _ = add(r.fine, max(1, (r.fineTo-r.fineFrom)/fineParts))
	}
}

// most is how many checkpoints to keep: each holds a pointer or two per
// turn, so a session of many turns keeps fewer (checkpointBytes in all,
// roughly), at least 16 and at most maxCheckpoints.
func (r *Replayer) most() int {
	return min(maxCheckpoints, max(16, checkpointBytes/(24*len(r.turnStarts)+1)))
}

// thin doubles the spacing until the checkpoints are few enough, keeping
// those spaced by half the new interval (turn starts are kept at half).
func (r *Replayer) thin() {
	for len(r.cps) > r.most() {
		r.every *= 2
		kept := r.cps[:0]
		last := 0
		for _, c := range r.cps {
			if c.pos-last >= r.every/2 {
				kept = append(kept, c)
				last = c.pos
			}
		}
		clear(r.cps[len(kept):])
		r.cps = kept
	}
	r.fine, r.fineFrom, r.fineTo = nil, 0, 0
}
