package adapters

import (
	"errors"
	"fmt"
	"sort"
)

// ReducerSnapshot is the whole state of a Reducer as plain data, so that a
// reducer can be kept and rebuilt later: the store keeps one every few
// hundred events of a long response, so that replaying to an event in its
// middle starts near it instead of at the response's start.
//
// RestoreReducer(r.Snapshot()) behaves exactly as r from then on: given the
// same further events it emits the same events, and its Items, Summary,
// Turn, Seq, Done, Terminal and Usage are the same. The snapshot shares no
// memory the reducer changes later. Its JSON form (the tags below) restores
// the same reducer, raw JSON values (provider usage) compacted as they are
// when events are stored.
type ReducerSnapshot struct {
	Protocol    string         `json:"protocol"`
	Seq         int            `json:"seq"` // the seq of the last event emitted
	ResponseID  string         `json:"response_id,omitempty"`
	Model       string         `json:"model,omitempty"`
	Items       []ItemSnapshot `json:"items"` // in output order
	Usage       *Usage         `json:"usage,omitempty"`
	Terminal    *Event         `json:"terminal,omitempty"`
	Diagnostics []Diagnostic   `json:"diagnostics,omitempty"`
}

// ItemSnapshot is one item of a snapshot. Text is the item's whole text
// (the text received so far for an open item), or, in a snapshot taken by
// SnapshotSince, the text after its first TextFrom bytes.
type ItemSnapshot struct {
	// Index is the item's place in output order.
	Index int `json:"index"`
	Item
	// TextFrom is the number of bytes of the item's text, kept by the
	// caller from an earlier snapshot, that Text leaves out. RestoreReducer
	// takes whole texts only (TextFrom 0).
	TextFrom int `json:"text_from,omitempty"`
}

// Snapshot returns the reducer's whole state.
func (r *Reducer) Snapshot() ReducerSnapshot { return r.SnapshotSince(0, nil) }

// SnapshotSince is Snapshot for a caller that keeps snapshots one after
// another and stores each as what changed since the one before, so that
// no text or diagnostic is stored once per snapshot: since is the Seq of
// the caller's previous snapshot (0 for none) and have[i] the length of
// item i's text in it. It copies nothing that did not change.
//
// Items holds only the items that may have changed after since: those
// started, closed or ended by the terminal after it, and those still open.
// The others are as they were. Diagnostics holds only those after since.
//
// An item's text only grows while the item is open; when the item closes,
// a final text from the provider that differs from its deltas replaces it
// (with a text_done_mismatch or arguments_done_mismatch diagnostic right
// before the item.done). So an item that was in the previous snapshot and
// has not been replaced since has as Text only the bytes after the first
// have[i] (TextFrom = have[i]); an item that is new, or whose text was
// replaced since, has its whole text (TextFrom 0).
func (r *Reducer) SnapshotSince(since int, have []int) ReducerSnapshot {
	s := ReducerSnapshot{
		Protocol:   r.protocol,
		Seq:        r.seq,
		ResponseID: r.responseID,
		Model:      r.model,
		Items:      []ItemSnapshot{},
	}
	ended := r.terminal != nil && r.terminal.Seq > since
	for i, it := range r.items {
		if it.StartSeq <= since && it.State != ItemStreaming && it.DoneSeq <= since && !(ended && it.State == ItemIncomplete) {
			continue // unchanged since
		}
		from := 0
		if i < len(have) && have[i] > 0 && have[i] <= len(it.buf) && !r.replacedSince(it, since) {
			from = have[i]
		}
		is := ItemSnapshot{Index: i, Item: *it, TextFrom: from}
		is.buf = nil
		is.Text = string(it.buf[from:])
		if it.Arguments != nil {
			is.Arguments = append([]byte(nil), it.Arguments...)
		}
		s.Items = append(s.Items, is)
	}
	if r.usage != nil {
		u := *r.usage
		s.Usage = &u
	}
	if r.terminal != nil {
		t := *r.terminal
		if t.Usage != nil {
			u := *t.Usage
			t.Usage = &u
		}
		s.Terminal = &t
	}
	if i := sort.Search(len(r.diagnostics), func(i int) bool { return r.diagnostics[i].Seq > since }); i < len(r.diagnostics) {
		s.Diagnostics = append([]Diagnostic(nil), r.diagnostics[i:]...)
	}
	return s
}

// replacedSince reports whether it's text was replaced by the provider's
// final text after seq since: it closed after since, and close reported
// the mismatch right before its item.done.
func (r *Reducer) replacedSince(it *Item, since int) bool {
	if it.DoneSeq <= since || it.DoneSeq == 0 {
		return false
	}
	at := it.DoneSeq - 1
	i := sort.Search(len(r.diagnostics), func(i int) bool { return r.diagnostics[i].Seq >= at })
	if i == len(r.diagnostics) || r.diagnostics[i].Seq != at {
		return false
	}
	k := r.diagnostics[i].Kind
	return k == DiagTextDoneMismatch || k == DiagArgsDoneMismatch
}

// RestoreReducer rebuilds a reducer from a whole snapshot: every item, in
// order (Index i at place i), with its whole text (TextFrom 0). The
// Arguments of a parsed tool call may be left out: they are derived from
// its text again, as the reducer derived them.
func RestoreReducer(s ReducerSnapshot) (*Reducer, error) {
	if s.Seq < 0 {
		return nil, fmt.Errorf("adapters: snapshot seq %d", s.Seq)
	}
	r := NewReducer(s.Protocol)
	r.seq = s.Seq
	r.responseID, r.model = s.ResponseID, s.Model
	r.items = make([]*Item, 0, len(s.Items))
	for i := range s.Items {
		is := &s.Items[i]
		if is.Index != i {
			return nil, fmt.Errorf("adapters: snapshot item %d (%s) is numbered %d", i, is.ID, is.Index)
		}
		if is.TextFrom != 0 {
			return nil, fmt.Errorf("adapters: snapshot item %d (%s) holds only part of its text", i, is.ID)
		}
		if _, dup := r.byID[is.ID]; dup {
			return nil, fmt.Errorf("adapters: snapshot item %q appears twice", is.ID)
		}
		it := is.Item
		it.buf = nil
		if is.Text != "" {
			// Room to grow: an open item goes on receiving deltas, and
			// reallocating a long text at the first one costs a copy.
			it.buf = make([]byte, len(is.Text), len(is.Text)+len(is.Text)/8+64)
			copy(it.buf, is.Text)
		}
		if it.Arguments != nil {
			it.Arguments = append([]byte(nil), it.Arguments...)
		} else if it.State == ItemParsed {
			args, problem := parseArguments(it.buf)
			if problem != "" {
				return nil, fmt.Errorf("adapters: snapshot item %q is a parsed call whose arguments do not parse: %s", is.ID, problem)
			}
			it.Arguments = args
		}
		r.items = append(r.items, &it)
		r.byID[it.ID] = &it
	}
	if s.Usage != nil {
		u := *s.Usage
		r.usage = &u
	}
	if s.Terminal != nil {
		t := *s.Terminal
		if t.Usage != nil {
			u := *t.Usage
			t.Usage = &u
		}
		r.terminal = &t
	}
	if len(s.Diagnostics) > 0 {
		r.diagnostics = append([]Diagnostic(nil), s.Diagnostics...)
		if !sort.SliceIsSorted(r.diagnostics, func(i, j int) bool { return r.diagnostics[i].Seq < r.diagnostics[j].Seq }) {
			return nil, errors.New("adapters: snapshot diagnostics are not in seq order")
		}
	}
	return r, nil
}
