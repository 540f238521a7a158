package store

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/modelwire/modelwire/adapters"
)

// AttemptMeta describes one HTTP attempt as it is sent.
type AttemptMeta struct {
	// Protocol defaults to the session's.
	Protocol string
	Method   string
	URL      string      // redacted when stored
	Header   http.Header // redacted when stored
	Body     []byte
	Stream   bool
	// RetryReason says why this attempt retries the previous one of its
	// turn ("429 rate_limit_error, Retry-After 1s").
	RetryReason string
	// Reasoning is the body's reasoning setting as the protocol's
	// descriptor reads it (adapters.Descriptor.ReasoningSetting); nil when
	// not known (no body).
	Reasoning *string
}

// Mark names an attempt timing.
type Mark int

// The attempt timings, the chapter's six time points (13.7.1). First
// event, first output token, first visible text and terminal are marked
// by Append; request sent and first response by the caller (Response
// marks it if it is still unset). MarkFirstByte is the first response:
// the headers arrived (its column's name is older than the distinction).
const (
	MarkSent Mark = iota
	MarkFirstByte
	MarkFirstEvent
	MarkFirstText
	MarkTerminal
	MarkFirstToken
	numMarks
)

var markColumn = [numMarks]string{"sent_us", "first_byte_us", "first_event_us", "first_text_us", "terminal_us", "first_token_us"}

// Recorder records one attempt: its response, raw events and the
// canonical events derived from them, and its timings. Its methods may be
// called from any goroutine.
type Recorder struct {
	s *SessionWriter
	// aid is the attempt's row id, set when its insert runs: at once, or
	// with the batch for a copy (SessionMeta.Copy), so ops read it when
	// they run, not when they are made.
	aid      *int64
	turn     int
	attempt  int
	start    time.Time // monotonic origin of the attempt's offsets
	mu       sync.Mutex
	rawIndex int
	marked   [numMarks]bool
	status   int
	finished bool
	// snap keeps the attempt's snapshots (snapshot.go) until it finishes.
	snap *snapshotter
}

// StartAttempt records a new attempt of turn (1-based) and returns its
// recorder. Attempts of a turn are numbered 1, 2, … in the order started.
func (s *SessionWriter) StartAttempt(turn int, m AttemptMeta) (*Recorder, error) {
	now := time.Now()
	return s.startAttempt(turn, 0, m, now, s.sessionOffset(), now)
}

// StartAttemptAt records attempt (1-based) of turn as an import found it:
// started at startedAt, startOff into the session.
func (s *SessionWriter) StartAttemptAt(turn, attempt int, m AttemptMeta, startedAt time.Time, startOff time.Duration) (*Recorder, error) {
	return s.startAttempt(turn, attempt, m, startedAt, startOff, time.Now())
}

// startAttempt inserts the attempt row. attempt 0 means the next number;
// startedAt is the wall time stored, startOff its offset in the session,
// mono the monotonic origin of its event offsets.
func (s *SessionWriter) startAttempt(turn, attempt int, m AttemptMeta, startedAt time.Time, startOff time.Duration, mono time.Time) (*Recorder, error) {
	if turn < 1 {
		return nil, fmt.Errorf("store: turn %d: turns are numbered from 1", turn)
	}
	w := s.db.w
	w.mu.Lock()
	if attempt == 0 {
		attempt = s.ls.attempts[turn] + 1
	}
	s.ls.attempts[turn] = max(s.ls.attempts[turn], attempt)
	w.mu.Unlock()
	hdr, _ := json.Marshal(Redact(m.Header))
	if m.Header == nil {
		hdr = []byte("{}")
	}
	r := &Recorder{s: s, turn: turn, attempt: attempt, start: mono, aid: new(int64)}
	var body any
	if m.Body != nil {
		body = m.Body
	}
	protocol := cmp.Or(m.Protocol, s.ls.protocol)
	var reasoning any
	if m.Reasoning != nil {
		reasoning = Redact(*m.Reasoning)
	}
	ls, aid := s.ls, r.aid
	insert := execOp(func(t *txn) error { // ls.sid: a copy's is set by the batch
		sid := ls.sid
		if err := t.exec(`UPDATE sessions SET turns = max(turns, ?) WHERE sid = ?`, turn, sid); err != nil {
			return err
		}
		st, err := t.stmt(`INSERT INTO attempts (sid, turn, attempt, protocol, started_at, start_us,
			method, url, request_headers, request_body, stream, retry_reason, reasoning_setting, snapshots)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1) RETURNING aid`)
		if err != nil {
			return err
		}
		return st.QueryRowContext(t.ctx,
			sid, turn, attempt, protocol, startedAt.UnixMilli(), startOff.Microseconds(),
			m.Method, Redact(m.URL), string(hdr), body, m.Stream, Redact(m.RetryReason), reasoning).Scan(aid)
	})
	var err error
	if s.ls.batchEntries {
		// A copy's attempt row goes in with the batch (one commit for a
		// collected trace, not one per model call).
		_, err = w.append(s.ls, 0, false, func(_ int, b []op) []op { return append(b, insert) })
	} else {
		err = w.exec(insert)
	}
	if err != nil {
		return nil, err
	}
	r.snap = newSnapshotter(protocol)
	return r, nil
}

// Turn and Attempt number the attempt.
func (r *Recorder) Turn() int    { return r.turn }
func (r *Recorder) Attempt() int { return r.attempt }

// offset is the monotonic time since the attempt started.
func (r *Recorder) offset() time.Duration { return time.Since(r.start) }

// Mark records a timing as of now; a timing already recorded is kept.
func (r *Recorder) Mark(m Mark) error { return r.MarkAt(m, r.offset()) }

// MarkAt records a timing at offset from the attempt's start; a timing
// already recorded is kept.
func (r *Recorder) MarkAt(m Mark, offset time.Duration) error {
	if m < 0 || m >= numMarks {
		return fmt.Errorf("store: unknown mark %d", m)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.marked[m] {
		return nil
	}
	r.marked[m] = true
	_, err := r.s.db.w.append(r.s.ls, 0, false, func(_ int, b []op) []op { return append(b, r.markOp(m, offset)) })
	return err
}

func (r *Recorder) markOp(m Mark, offset time.Duration) execOp {
	col, us, aid := markColumn[m], offset.Microseconds(), r.aid
	return func(t *txn) error {
		return t.exec(`UPDATE attempts SET `+col+` = ? WHERE aid = ?`, us, *aid)
	}
}

// ServerTime records the provider's own figure of its time on the
// request (from a response header; source names it), kept apart from the
// attempt's time points.
func (r *Recorder) ServerTime(d time.Duration, source string) error {
	us, aid := d.Microseconds(), r.aid
	_, err := r.s.db.w.append(r.s.ls, 0, false, func(_ int, b []op) []op {
		return append(b, execOp(func(t *txn) error {
			return t.exec(`UPDATE attempts SET server_us = ?, server_source = ? WHERE aid = ?`, us, source, *aid)
		}))
	})
	return err
}

// Response records the response status and headers (redacted), and marks
// the first byte if it is not marked yet.
func (r *Recorder) Response(status int, h http.Header) error {
	off := r.offset()
	hdr, _ := json.Marshal(Redact(h))
	if h == nil {
		hdr = []byte("{}")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status = status
	aid := r.aid
	ops := []op{execOp(func(t *txn) error {
		return t.exec(`UPDATE attempts SET status_code = ?, response_headers = ? WHERE aid = ?`, status, string(hdr), *aid)
	})}
	if !r.marked[MarkFirstByte] {
		r.marked[MarkFirstByte] = true
		ops = append(ops, r.markOp(MarkFirstByte, off))
	}
	_, err := r.s.db.w.append(r.s.ls, 0, false, func(_ int, b []op) []op { return append(b, ops...) })
	return err
}

// Append records one step as of now: its raw event (none when step.Index
// is -1, the end of the input) and the canonical events derived from it.
// For a non-streaming response the raw event is the whole body. It never
// waits for the disk unless the step holds a terminal event (which
// commits everything up to it) or the batch is full.
//
// An error means a commit failed (this one, or an earlier one, reported
// once): what was appended stays queued, in order, and is retried by the
// next commit, so it must not be appended again.
func (r *Recorder) Append(step adapters.Step) error { return r.AppendAt(r.offset(), step) }

// AppendAt is Append with the step's offset from the attempt's start.
func (r *Recorder) AppendAt(offset time.Duration, step adapters.Step) error {
	if step.Index < 0 && len(step.Events) == 0 {
		return nil
	}
	return r.appendStep(offset, step.Index >= 0, step.Raw, step.Events, nil)
}

// appendStep queues a step and the attempt updates its events imply. Its
// events are encoded already (an import keeps the bytes it read), or, when
// events is nil, encoded here: plain ones (plainEvents, nearly all) into
// the batch's arena.
func (r *Recorder) appendStep(offset time.Duration, hasRaw bool, raw adapters.RawEvent, evs []adapters.Event, events []byte) error {
	if events == nil && !plainEvents(evs) {
		var err error
		if events, err = encodeEvents(evs); err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return fmt.Errorf("store: attempt %d.%d is finished", r.turn, r.attempt)
	}
	rawIndex := -1
	if hasRaw {
		rawIndex = r.rawIndex
		r.rawIndex++
	}
	us := offset.Microseconds()
	var marks []Mark
	mark := func(m Mark) {
		if !r.marked[m] {
			r.marked[m] = true
			marks = append(marks, m)
		}
	}
	if hasRaw {
		mark(MarkFirstEvent)
	}
	terminal := false
	var usage *adapters.Usage
	var started, term *adapters.Event
	var proposals []int // indexes into step.Events
	for i := range evs {
		ev := &evs[i]
		if adapters.IsOutputToken(ev) {
			mark(MarkFirstToken)
		}
		if adapters.IsVisibleText(ev) {
			mark(MarkFirstText)
		}
		switch ev.Type {
		case adapters.EvTerminal:
			terminal, term = true, ev
			mark(MarkTerminal)
		case adapters.EvUsage:
			if ev.Usage != nil {
				usage = ev.Usage
			}
		case adapters.EvResponseStarted:
			started = ev
		case adapters.EvToolProposed:
			proposals = append(proposals, i)
		}
	}
	n := max(1, len(evs))
	var snap []snapRow
	if r.snap != nil {
		var err error
		if snap, err = r.snap.step(evs, n); err != nil {
			// The step is stored all the same; the attempt goes on
			// without snapshots, and replay from its start.
			r.snap = nil
		}
	}
	ls, aid, turn, attempt := r.s.ls, r.aid, r.turn, r.attempt
	queued := false
	// A terminal commits at once (a reader waiting for the answer sees
	// it), unless the session is a copy (SessionMeta.Copy).
	_, err := r.s.db.w.append(ls, n, terminal && !ls.batchEntries, func(seq int, ops []op) []op {
		queued = true
		if events == nil && len(evs) > 0 {
			events = r.s.db.w.encodeEvents(evs)
		}
		ops = append(ops, r.s.db.w.stepOp(stepOp{ls: ls, aidRef: aid, seq: seq, n: n, turn: turn, attempt: attempt,
			offsetUS: us, rawIndex: rawIndex, raw: raw, events: events}))
		if snap != nil {
			ops = append(ops, snapshotOp(aid, seq+n-1, snap))
		}
		for _, m := range marks {
			ops = append(ops, r.markOp(m, offset))
		}
		if started != nil && (started.ResponseID != "" || started.Model != "") {
			id, model := started.ResponseID, started.Model
			ops = append(ops, execOp(func(t *txn) error {
				if err := t.exec(`UPDATE attempts SET response_id = coalesce(nullif(?, ''), response_id),
					response_model = coalesce(nullif(?, ''), response_model) WHERE aid = ?`, id, model, *aid); err != nil {
					return err
				}
				if model == "" {
					return nil
				}
				// The manifest keeps the first model reported (the snapshot
				// that answered); the column, the last.
				return t.exec(`UPDATE sessions SET model_reported = ?, manifest = CASE
					WHEN json_valid(manifest) AND json_extract(manifest, '$.model_reported') IS NULL
					THEN json_set(manifest, '$.model_reported', ?) ELSE manifest END WHERE sid = ?`, model, model, ls.sid)
			}))
		}
		if usage != nil {
			ops = append(ops, usageOp(aid, usage))
		}
		if term != nil {
			status, reason := string(term.Status), string(term.StopReason)
			ops = append(ops, execOp(func(t *txn) error {
				return t.exec(`UPDATE attempts SET terminal_status = ?, stop_reason = ? WHERE aid = ?`, status, reason, *aid)
			}))
		}
		for _, i := range proposals {
			ev := evs[i]
			args := string(ev.Arguments)
			entry := seq + i
			ops = append(ops, execOp(func(t *txn) error {
				_, err := t.w.upsertCall.ExecContext(t.ctx, ls.sid, turn, ev.CallID, ev.Name, args, entry)
				return err
			}))
		}
		return ops
	})
	if !queued {
		// The shadow reducer has seen a step that will not be stored.
		r.snap = nil
	}
	return err
}

func usageOp(aid *int64, u *adapters.Usage) execOp {
	var pu any
	if len(u.ProviderUsage) > 0 {
		pu = string(u.ProviderUsage)
	}
	in, out, cr, cw, rs := nullInt(u.InputTokens), nullInt(u.OutputTokens), nullInt(u.CacheReadTokens), nullInt(u.CacheWriteTokens), nullInt(u.ReasoningTokens)
	cw1h, ws := nullInt(u.CacheWrite1hTokens), nullInt(u.WebSearchCalls)
	return func(t *txn) error {
		return t.exec(`UPDATE attempts SET input_tokens = ?, output_tokens = ?, cache_read_tokens = ?,
			cache_write_tokens = ?, reasoning_tokens = ?, provider_usage = ?, cache_write_1h_tokens = ?,
			web_search_calls = ? WHERE aid = ?`, in, out, cr, cw, rs, pu, cw1h, ws, *aid)
	}
}

func nullInt(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// Finish ends the attempt and commits it: failed when err is not nil (a
// transport error, a timeout; its text is redacted) or the response status
// was an HTTP error, done otherwise.
func (r *Recorder) Finish(err error) error {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	return r.finish(msg, r.offset(), "")
}

// FinishAt is Finish at offset from the attempt's start (an import's
// attempt ended when its file says).
func (r *Recorder) FinishAt(err error, offset time.Duration) error {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	return r.finish(msg, offset, "")
}

// finish ends the attempt with an error text, at offset; state "" derives
// the state from the error and the status.
func (r *Recorder) finish(errText string, offset time.Duration, state Status) error {
	r.mu.Lock()
	if r.finished {
		r.mu.Unlock()
		return nil
	}
	r.finished = true
	r.snap = nil
	if state == "" {
		state = StatusDone
		if errText != "" || r.status >= 400 {
			state = StatusFailed
		}
	}
	r.mu.Unlock()
	aid, us, msg := r.aid, offset.Microseconds(), Redact(errText)
	var end execOp = func(t *txn) error {
		return t.exec(`UPDATE attempts SET state = ?, error = ?, finished_us = ? WHERE aid = ?`, state, msg, us, *aid)
	}
	if r.s.ls.batchEntries { // a copy's attempt ends with the batch
		_, err := r.s.db.w.append(r.s.ls, 0, false, func(_ int, b []op) []op { return append(b, end) })
		return err
	}
	return r.s.db.w.exec(end)
}

// encodeEvents encodes canonical events as a JSON array (nil for none),
// without HTML escaping so stored text stays readable.
func encodeEvents(evs []adapters.Event) ([]byte, error) {
	if len(evs) == 0 {
		return nil, nil
	}
	if b, ok := appendPlainEvents(nil, evs); ok {
		return b, nil
	}
	e := encoders.Get().(*eventEncoder)
	defer encoders.Put(e)
	e.buf.Reset()
	if err := e.enc.Encode(evs); err != nil {
		return nil, fmt.Errorf("store: cannot encode events: %w", err)
	}
	// One allocation, the size of the result: the step keeps it until
	// its commit.
	return bytes.Clone(bytes.TrimRight(e.buf.Bytes(), "\n")), nil
}

// appendPlainEvents appends evs as encodeEvents' JSON array, byte for byte
// what encoding/json writes (TestPlainEventsMatchEncodingJSON), without
// its reflection: a stream's events are nearly all deltas, and encoding
// them was a tenth of an append's cost. Events with arguments, usage or an
// error (a few per response) are left to encoding/json: ok is false.
func appendPlainEvents(dst []byte, evs []adapters.Event) (_ []byte, ok bool) {
	if !plainEvents(evs) {
		return dst, false
	}
	n := 2
	for i := range evs {
		ev := &evs[i]
		n += 64 + len(ev.Type) + len(ev.ResponseID) + len(ev.Model) + len(ev.ItemID) + len(ev.Kind) + len(ev.CallID) +
			len(ev.Name) + len(ev.Delta) + len(ev.Signature) + len(ev.Status) + len(ev.StopReason) +
			len(ev.ProviderStopReason) + len(ev.RawType) + len(ev.Detail)
		if ev.Final != nil {
			n += 10 + len(*ev.Final)
		}
	}
	dst = slices.Grow(dst, n)
	dst = append(dst, '[')
	for i := range evs {
		ev := &evs[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"seq":`...)
		dst = strconv.AppendInt(dst, int64(ev.Seq), 10)
		dst = append(dst, `,"type":`...)
		dst = adapters.AppendJSONString(dst, string(ev.Type))
		// The fields in Event's order, each omitted when empty.
		for _, f := range [...]struct{ key, val string }{
			{`,"response_id":`, ev.ResponseID}, {`,"model":`, ev.Model}, {`,"item_id":`, ev.ItemID}, {`,"kind":`, ev.Kind},
			{`,"call_id":`, ev.CallID}, {`,"name":`, ev.Name}, {`,"delta":`, ev.Delta},
		} {
			if f.val != "" {
				dst = append(dst, f.key...)
				dst = adapters.AppendJSONString(dst, f.val)
			}
		}
		if ev.Final != nil {
			dst = append(dst, `,"final":`...)
			dst = adapters.AppendJSONString(dst, *ev.Final)
		}
		for _, f := range [...]struct{ key, val string }{
			{`,"signature":`, ev.Signature}, {`,"status":`, string(ev.Status)}, {`,"stop_reason":`, string(ev.StopReason)},
			{`,"provider_stop_reason":`, ev.ProviderStopReason}, {`,"raw_type":`, ev.RawType}, {`,"detail":`, ev.Detail},
		} {
			if f.val != "" {
				dst = append(dst, f.key...)
				dst = adapters.AppendJSONString(dst, f.val)
			}
		}
		dst = append(dst, '}')
	}
	return append(dst, ']'), true
}

// plainEvents reports whether appendPlainEvents encodes evs.
func plainEvents(evs []adapters.Event) bool {
	for i := range evs {
		if ev := &evs[i]; len(ev.Arguments) > 0 || ev.Usage != nil || ev.Error != nil {
			return false
		}
	}
	return true
}

// eventEncoder is a reusable JSON encoder of steps' events.
type eventEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var encoders = sync.Pool{New: func() any {
	e := &eventEncoder{}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}}
