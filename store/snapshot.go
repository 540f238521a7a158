package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/modelwire/modelwire/adapters"
)

// Snapshots (migration 0002). Rebuilding the state at entry N replays the
// canonical events of N's response through adapters.Reducer, the reducer
// the live path uses. Decoding a stored event costs a few microseconds, so
// replaying a long response from its start is slow; instead the writer
// keeps a snapshot of the reducer every snapshotEvery entries of a
// response (at the end of the step that reaches it), and StateAt restores
// the reducer from the last snapshot at or before N and replays fewer
// than snapshotEvery entries (plus the rest of one step) from there.
//
// The writer gets the reducer's state from a shadow reducer of its own,
// fed the events it stores the way replay feeds them (see feed), so that
// the state in a snapshot is the state replay would rebuild.
//
// Snapshots are kept incrementally, so that no text is stored once per
// snapshot: a row holds the reducer's scalars, the items whose fields
// changed since the previous row of its chain, the diagnostics added and
// the bytes the items' texts gained (adapters.Reducer.SnapshotSince, whose
// cost does not grow with what did not change). The state at a row is the
// fold of its chain up to it. Folding costs per row,
// so the rows form snapshotLevels chains: level 0 has a row at every
// snapshot, level j a row at every snapshotFanout^j-th, each relative to
// the previous row of its own level. A restore folds the rows of the top
// level up to the snapshot, then those of the level below after the last
// one folded, and so on: at most snapshotFanout-1 rows per level, plus
// the top level's (one per snapshotEvery·snapshotFanout^(levels-1)
// entries). Each byte of text is stored once per level (again when a
// provider's final text replaced an item's deltas).

// Spacing of the snapshots. A restore replays up to snapshotEvery entries
// (~4 µs each, decoding them) and folds up to snapshotFanout-1 rows per
// level below the top, plus the top level's rows: with these, the middle
// of a 1,000,000-entry response is 3 + 15 + 15 rows and at most 511
// entries away (measured with BenchmarkJump: 512 replays the far case in
// about half the time of 1024, for 1.4 more bytes per entry on disk).
// Variables so that tests can change them.
var (
	snapshotEvery  = 512
	snapshotFanout = 16
	snapshotLevels = 3
)

// snapState is a snapshot row's state column.
type snapState struct {
	Seq        int             `json:"seq"` // the reducer's seq
	ResponseID string          `json:"response_id,omitempty"`
	Model      string          `json:"model,omitempty"`
	Usage      *adapters.Usage `json:"usage,omitempty"`
	Terminal   *adapters.Event `json:"terminal,omitempty"`
	// Items are the items whose fields or text changed since the previous
	// row of the chain; their text is in the row's text column.
	Items []snapItem `json:"items,omitempty"`
	// Diagnostics are the ones added since the previous row.
	Diagnostics []adapters.Diagnostic `json:"diagnostics,omitempty"`
	// NItems and NDiags are the totals, to check the fold.
	NItems int `json:"n_items"`
	NDiags int `json:"n_diags"`
}

// snapItem is an item of a row: its fields (Text empty; the Arguments of
// a parsed call are derived from its text again), and how its text goes
// on from the previous row: keep the first TextFrom bytes, then append
// TextLen bytes of the row's text column.
type snapItem struct {
	Index int `json:"i"`
	adapters.Item
	TextFrom int `json:"text_from"`
	TextLen  int `json:"text_len"`
}

// snapRow is a row about to be written.
type snapRow struct {
	level int
	state []byte
	text  []byte
}

// snapChain is where a chain of rows stands: as of its last row, the
// reducer's seq, each item's text length and fields (Text and Arguments
// empty), and the number of diagnostics.
type snapChain struct {
	since int
	have  []int
	items []adapters.Item
	diags int
}

// snapshotter keeps the shadow reducer of one attempt and makes its rows.
type snapshotter struct {
	red     *adapters.Reducer
	entries int // entries fed since the last snapshot
	taken   int // snapshots taken
	chains  []snapChain
}

func newSnapshotter(protocol string) *snapshotter {
	return &snapshotter{red: adapters.NewReducer(protocol), chains: make([]snapChain, snapshotLevels)}
}

// step feeds one step's n entries, whose events are evs, and returns the
// rows to write after it, if a snapshot is due.
func (s *snapshotter) step(evs []adapters.Event, n int) ([]snapRow, error) {
	if !eventsRoundTrip(evs) {
		// Replay feeds the stored events, not these: where the two differ
		// (ill-formed UTF-8 becomes U+FFFD), feed what replay will.
		stored, err := encodeEvents(evs)
		if err != nil {
			return nil, err
		}
		evs = nil
		if len(stored) > 0 {
			if err := json.Unmarshal(stored, &evs); err != nil {
				return nil, err
			}
		}
	}
	return s.fed(evs, n)
}

// fed feeds a step's events as replay does and counts its entries.
func (s *snapshotter) fed(evs []adapters.Event, n int) ([]snapRow, error) {
	if len(evs) > 0 {
		feed(s.red, evs, 0, len(evs)-1)
	}
	s.entries += n
	if s.entries < snapshotEvery {
		return nil, nil
	}
	s.entries = 0
	s.taken++
	var rows []snapRow
	for level, every := 0, 1; level < len(s.chains) && s.taken%every == 0; level, every = level+1, every*snapshotFanout {
		row, err := s.chains[level].row(s.red)
		if err != nil {
			return nil, err
		}
		row.level = level
		rows = append(rows, row)
	}
	return rows, nil
}

// row makes the chain's next row, for the reducer's state now: what
// SnapshotSince says may have changed since the chain's last row, less the
// items whose fields and text did not.
func (c *snapChain) row(red *adapters.Reducer) (snapRow, error) {
	snap := red.SnapshotSince(c.since, c.have)
	st := snapState{Seq: snap.Seq, ResponseID: snap.ResponseID, Model: snap.Model, Usage: snap.Usage, Terminal: snap.Terminal,
		Diagnostics: snap.Diagnostics, NDiags: c.diags + len(snap.Diagnostics)}
	var text []byte
	for k := range snap.Items {
		it := &snap.Items[k]
		i, txt, from := it.Index, it.Text, it.TextFrom
		fields := it.Item
		fields.Text, fields.Arguments = "", nil
		if i < len(c.items) && txt == "" && from == c.have[i] && reflect.DeepEqual(fields, c.items[i]) {
			continue // unchanged
		}
		si := snapItem{Index: i, Item: fields, TextFrom: from, TextLen: len(txt)}
		if fields.State != adapters.ItemParsed {
			si.Arguments = it.Arguments // a parsed call's are derived from its text again
		}
		st.Items = append(st.Items, si)
		text = append(text, txt...)
		switch {
		case i < len(c.items):
			c.items[i], c.have[i] = fields, from+len(txt)
		case i == len(c.items):
			c.items, c.have = append(c.items, fields), append(c.have, from+len(txt))
		default:
			return snapRow{}, fmt.Errorf("store: snapshot: item %d after %d items", i, len(c.items))
		}
	}
	st.NItems = len(c.items)
	state, err := encodeJSON(st)
	if err != nil {
		return snapRow{}, err
	}
	c.since, c.diags = snap.Seq, st.NDiags
	return snapRow{state: state, text: text}, nil
}

// encodeJSON encodes v without HTML escaping, as events are stored, so
// that raw JSON inside (provider usage) keeps the bytes replay decodes.
func encodeJSON(v any) ([]byte, error) { return adapters.MarshalBody(v) }

// eventsRoundTrip reports whether evs decode from their stored JSON as
// they are: every string in them is well-formed UTF-8 (encoding/json
// replaces ill-formed bytes). Raw JSON values are compacted when stored,
// but the reducer only copies them into its state, and a snapshot stores
// that state as JSON too, compacted the same way.
func eventsRoundTrip(evs []adapters.Event) bool {
	for i := range evs {
		ev := &evs[i]
		for _, s := range [...]string{string(ev.Type), ev.ResponseID, ev.Model, ev.ItemID, ev.Kind, ev.CallID, ev.Name, ev.Delta,
			ev.Signature, string(ev.Status), string(ev.StopReason), ev.ProviderStopReason, ev.RawType, ev.Detail} {
			if !utf8.ValidString(s) {
				return false
			}
		}
		if ev.Final != nil && !utf8.ValidString(*ev.Final) {
			return false
		}
		if e := ev.Error; e != nil && !(utf8.ValidString(e.Type) && utf8.ValidString(e.Code) && utf8.ValidString(e.Message)) {
			return false
		}
	}
	return true
}

// snapshotOp writes a snapshot's rows as the state after entry seq of
// attempt aid.
func snapshotOp(aid *int64, seq int, rows []snapRow) execOp {
	return func(t *txn) error {
		for _, r := range rows {
			if _, err := t.w.insertSnap.ExecContext(t.ctx, *aid, r.level, seq, string(r.state), r.text); err != nil {
				return err
			}
		}
		return nil
	}
}

// lastSnapshot is the entry of the last snapshot of attempt aid at or
// before entry n (0: none).
func (db *DB) lastSnapshot(ctx context.Context, aid int64, n int) (int, error) {
	var seq int
	err := db.sql.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM snapshots WHERE aid = ? AND level = 0 AND seq <= ?`, aid, n).Scan(&seq)
	return seq, err
}

// foldRow is a row of a restore, as its first pass read it.
type foldRow struct {
	level, seq int
	items      []snapItem // Index, TextFrom and TextLen only
	textLen    int
}

// restoreSnapshot rebuilds the reducer of attempt aid as of its snapshot
// at entry seq, by folding its rows: the top level's up to seq, then each
// level's after the last row folded. It reads the rows twice: their
// states first, to learn each item's text length, then their texts,
// copied once into buffers of that length. (Building a text of megabytes
// by appending reallocates it several times, and fresh memory costs.)
// It returns the reducer and the number of rows folded.
func (db *DB) restoreSnapshot(ctx context.Context, aid int64, seq int, protocol string) (*adapters.Reducer, int, error) {
	var top int
	if err := db.sql.QueryRowContext(ctx, `SELECT coalesce(max(level), 0) FROM snapshots WHERE aid = ?`, aid).Scan(&top); err != nil {
		return nil, 0, err
	}
	var (
		plan     []foldRow
		items    []adapters.Item
		lens     []int  // each item's text length so far
		caps     []int  // the longest it was
		replaced []bool // it was cut back at some row
		diags    []adapters.Diagnostic
		last     snapState
		state    sql.RawBytes
		after    int // the last row folded
	)
	for level := top; level >= 0; level-- {
		rows, err := db.sql.QueryContext(ctx, `SELECT seq, state, coalesce(length(text), 0) FROM snapshots
			WHERE aid = ? AND level = ? AND seq > ? AND seq <= ? ORDER BY seq`, aid, level, after, seq)
		if err != nil {
			return nil, 0, err
		}
		for rows.Next() {
			f := foldRow{level: level}
			if err := rows.Scan(&f.seq, &state, &f.textLen); err != nil {
				rows.Close()
				return nil, 0, err
			}
			var st snapState
			if err := json.Unmarshal(state, &st); err != nil {
				rows.Close()
				return nil, 0, fmt.Errorf("store: snapshot at entry %d: %w", f.seq, err)
			}
			off := 0
			for k := range st.Items {
				si := &st.Items[k]
				i := si.Index
				switch {
				case i == len(items):
					items, lens, caps, replaced = append(items, adapters.Item{}), append(lens, 0), append(caps, 0), append(replaced, false)
				case i > len(items) || i < 0:
					rows.Close()
					return nil, 0, fmt.Errorf("store: snapshot at entry %d: item %d of %d", f.seq, i, len(items))
				}
				if si.TextFrom < 0 || si.TextFrom > lens[i] || si.TextLen < 0 {
					rows.Close()
					return nil, 0, fmt.Errorf("store: snapshot at entry %d: item %d's text does not follow", f.seq, i)
				}
				replaced[i] = replaced[i] || si.TextFrom < lens[i]
				lens[i] = si.TextFrom + si.TextLen
				caps[i] = max(caps[i], lens[i])
				off += si.TextLen
				items[i] = si.Item
				si.Item = adapters.Item{} // the second pass needs only where the text goes
			}
			diags = append(diags, st.Diagnostics...)
			if len(items) != st.NItems || len(diags) != st.NDiags || off != f.textLen {
				rows.Close()
				return nil, 0, fmt.Errorf("store: snapshot at entry %d does not follow the one before it", f.seq)
			}
			f.items = st.Items
			plan = append(plan, f)
			last, after = st, f.seq
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, 0, err
		}
	}
	if after != seq {
		return nil, 0, fmt.Errorf("store: no snapshot at entry %d", seq)
	}

	// The texts: an item that only ever grew is built as a string in
	// place; one that was cut back (a final text replaced its deltas) in
	// bytes first.
	builders := make([]strings.Builder, len(items))
	bufs := make([][]byte, len(items))
	for i := range items {
		if replaced[i] {
			bufs[i] = make([]byte, 0, caps[i])
		} else {
			builders[i].Grow(caps[i])
		}
	}
	var text sql.RawBytes
	k := 0
	for k < len(plan) {
		level, from := plan[k].level, 0
		if k > 0 {
			from = plan[k-1].seq
		}
		rows, err := db.sql.QueryContext(ctx, `SELECT seq, text FROM snapshots
			WHERE aid = ? AND level = ? AND seq > ? AND seq <= ? ORDER BY seq`, aid, level, from, seq)
		if err != nil {
			return nil, 0, err
		}
		for k < len(plan) && plan[k].level == level && rows.Next() {
			var at int
			if err := rows.Scan(&at, &text); err != nil {
				rows.Close()
				return nil, 0, err
			}
			f := &plan[k]
			if f.seq != at || f.textLen != len(text) {
				rows.Close()
				return nil, 0, fmt.Errorf("store: the snapshots before entry %d changed while read", seq)
			}
			off := 0
			for _, si := range f.items {
				part := text[off : off+si.TextLen]
				off += si.TextLen
				if i := si.Index; replaced[i] {
					bufs[i] = append(bufs[i][:si.TextFrom], part...)
				} else {
					builders[i].Write(part)
				}
			}
			k++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, 0, err
		}
		if k < len(plan) && plan[k].level == level {
			return nil, 0, fmt.Errorf("store: the snapshots before entry %d changed while read", seq)
		}
	}
	snap := adapters.ReducerSnapshot{Protocol: protocol, Seq: last.Seq, ResponseID: last.ResponseID, Model: last.Model,
		Items: make([]adapters.ItemSnapshot, len(items)), Usage: last.Usage, Terminal: last.Terminal, Diagnostics: diags}
	for i, it := range items {
		if replaced[i] {
			it.Text = string(bufs[i])
		} else {
			it.Text = builders[i].String()
		}
		snap.Items[i] = adapters.ItemSnapshot{Index: i, Item: it}
	}
	red, err := adapters.RestoreReducer(snap)
	return red, len(plan), err
}

// backfill adds the snapshots of an attempt written without them (before
// schema 2): it replays the attempt once, making the rows the writer would
// have made, and writes them, then marks the attempt as having them. The
// rows are deterministic, so a backfill cut short, or done by two handles
// at once, writes the same rows again.
func (db *DB) backfill(ctx context.Context, sid int64, a *replayAttempt) error {
	if db.w == nil {
		return errors.New("store: the database is open read-only")
	}
	var batch []execOp
	write := func() error {
		ops := batch
		batch = nil
		return db.w.exec(func(t *txn) error {
			for _, op := range ops {
				if err := op(t); err != nil {
					return err
				}
			}
			return nil
		})
	}
	s := newSnapshotter(a.protocol)
	it, err := db.iterSteps(ctx, sid, a.firstSeq, a.aid, false)
	if err != nil {
		return err
	}
	it.canonical = true
	defer it.close()
	for st := it.next(); st != nil; st = it.next() {
		rows, err := s.fed(st.decoded, st.Entries())
		if err != nil {
			return err
		}
		if rows != nil {
			batch = append(batch, snapshotOp(&a.aid, st.Seq+st.Entries()-1, rows))
		}
		if len(batch) == 64 {
			if err := write(); err != nil {
				return err
			}
		}
	}
	if err := it.close(); err != nil {
		return err
	}
	aid := a.aid
	batch = append(batch, func(t *txn) error { return t.exec(`UPDATE attempts SET snapshots = 1 WHERE aid = ?`, aid) })
	return write()
}
