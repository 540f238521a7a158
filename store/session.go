package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelwire/modelwire/adapters"
)

// Status is a session's (or an attempt's) state in the store.
type Status string

// The statuses: running while it is recorded (or its process died, until
// the next open sweeps it to interrupted), done when it ended well, failed
// when its work ran and failed, interrupted when it was stopped before its
// end.
const (
	StatusRunning     Status = "running"
	StatusDone        Status = "done"
	StatusFailed      Status = "failed"
	StatusInterrupted Status = "interrupted"
)

// Verdict is a validation layer's outcome: "pass", "fail" or "skip"
// (session names them).
type Verdict string

// Session sources: what recorded a session (SessionMeta.Source).
const (
	SourceRun        = "run"         // modelwire run
	SourceTUI        = "tui"         // the workbench
	SourceProxy      = "proxy"       // modelwire proxy: one verdict per exchange
	SourceClaudeCode = "claude-code" // an imported Claude Code transcript
	SourceHAR        = "har"         // an imported HAR file
)

// SessionMeta describes a session when it is created.
type SessionMeta struct {
	// Title is what a person reads in the list (a scenario's title, or
	// "POST api.openai.com/v1/responses" for a recording); --search
	// matches it.
	Title    string
	Scenario string // "refund", or a scenario file's path
	Variant  string // "" or the variant of refund/<variant>
	Protocol string
	Provider string
	Model    string // the model asked for
	BaseURL  string // redacted when stored
	// Source says what recorded it: "run", "tui", "proxy", "har", ...
	Source string
	// Version is the modelwire version that recorded it.
	Version  string
	Manifest Manifest
	// CreatedAt defaults to now.
	CreatedAt time.Time
	// ParentID names the session this one was made from (edit-and-resend,
	// a fork); "" for none.
	ParentID string
}

// Manifest makes a run explainable later: what was asked, with which
// tools and output contract, by which adapter. The store fills Hashes.
type Manifest struct {
	Parameters     json.RawMessage `json:"parameters,omitempty"`
	Tools          json.RawMessage `json:"tools,omitempty"`
	OutputSchema   json.RawMessage `json:"output_schema,omitempty"`
	AdapterVersion string          `json:"adapter_version,omitempty"`
	// Hashes are "sha256:<hex>" of the compact JSON of parameters, tools
	// and output_schema, so runs with the same inputs can be grouped.
	Hashes map[string]string `json:"hashes,omitempty"`
}

// withHashes validates the manifest's JSON parts and fills Hashes.
func (m Manifest) withHashes() (Manifest, error) {
	m.Hashes = map[string]string{}
	for name, raw := range map[string]json.RawMessage{"parameters": m.Parameters, "tools": m.Tools, "output_schema": m.OutputSchema} {
		if len(raw) == 0 {
			continue
		}
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return m, fmt.Errorf("store: manifest %s is not valid JSON: %w", name, err)
		}
		sum := sha256.Sum256(b.Bytes())
		m.Hashes[name] = "sha256:" + hex.EncodeToString(sum[:])
	}
	if len(m.Hashes) == 0 {
		m.Hashes = nil
	}
	return m, nil
}

// SessionWriter records one session. Only the DB handle that created a
// session writes it; everything it is given is committed in order.
type SessionWriter struct {
	db *DB
	ls *liveSession
}

// CreateSession starts recording a new session, status running.
func (db *DB) CreateSession(m SessionMeta) (*SessionWriter, error) {
	return db.createSession(m, "", StatusRunning)
}

func (db *DB) createSession(m SessionMeta, id string, status Status) (*SessionWriter, error) {
	if db.w == nil {
		return nil, errors.New("store: the database is open read-only")
	}
	created := m.CreatedAt
	if created.IsZero() {
		created = time.Now()
	}
	if p := Redact(string(m.Manifest.Parameters)); p != string(m.Manifest.Parameters) {
		m.Manifest.Parameters = json.RawMessage(p) // an upstream's userinfo or key= in the parameters
	}
	man, err := m.Manifest.withHashes()
	if err != nil {
		return nil, err
	}
	manJSON, _ := json.Marshal(man)
	ls := &liveSession{start: time.Now(), nextSeq: 1, attempts: map[int]int{}}
	fixed := id != ""
	for try := 0; ; try++ {
		if !fixed {
			id = newID(created)
		}
		ls.id = id
		err = db.w.exec(func(t *txn) error {
			return t.w.conn.QueryRowContext(t.ctx, `INSERT INTO sessions (id, created_at, status, title, scenario, variant,
				protocol, provider, model, base_url, source, modelwire_version, manifest, writer_pid, writer_token, parent_id)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING sid`,
				id, created.UnixMilli(), status, Redact(m.Title), m.Scenario, m.Variant, m.Protocol, m.Provider, m.Model,
				Redact(m.BaseURL), m.Source, m.Version, string(manJSON), os.Getpid(), db.token, m.ParentID).Scan(&ls.sid)
		})
		if err == nil {
			break
		}
		if fixed || try == 4 || !strings.Contains(err.Error(), "UNIQUE") {
			return nil, err
		}
	}
	db.w.mu.Lock()
	db.w.sessions[ls.sid] = ls
	db.w.mu.Unlock()
	return &SessionWriter{db: db, ls: ls}, nil
}

// ID is the session's public id.
func (s *SessionWriter) ID() string { return s.ls.id }

// Flush commits everything recorded so far.
func (s *SessionWriter) Flush() error { return s.db.w.flush() }

// Finish commits everything and ends the session as done or failed.
func (s *SessionWriter) Finish(status Status) error {
	return s.FinishAt(status, time.Now())
}

// FinishAt is Finish with the session's end at a given time (an
// import's, from its file).
func (s *SessionWriter) FinishAt(status Status, at time.Time) error {
	if status != StatusDone && status != StatusFailed {
		return fmt.Errorf("store: a session finishes as %q or %q, not %q", StatusDone, StatusFailed, status)
	}
	return s.finish(status, at)
}

// Interrupt ends a session that was stopped before its end (cancelled,
// replaced by another, the program quitting): it lists as interrupted at
// once, not running until the database is closed. A finished session is
// left as it is.
func (s *SessionWriter) Interrupt() error {
	w := s.db.w
	w.mu.Lock()
	done := s.ls.finished
	w.mu.Unlock()
	if done {
		return nil
	}
	return s.finish(StatusInterrupted, time.Time{})
}

func (s *SessionWriter) finish(status Status, at time.Time) error {
	w := s.db.w
	var finished any
	if !at.IsZero() {
		finished = at.UnixMilli()
	}
	err := w.exec(func(t *txn) error {
		if err := t.exec(`UPDATE sessions SET status = ?, finished_at = ? WHERE sid = ?`, status, finished, s.ls.sid); err != nil {
			return err
		}
		return t.exec(sqlInterruptAttempts, s.ls.sid)
	})
	if err != nil {
		return err
	}
	w.mu.Lock()
	s.ls.finished = true
	w.mu.Unlock()
	return nil
}

// sessionOffset is the monotonic time since the session started.
func (s *SessionWriter) sessionOffset() time.Duration { return time.Since(s.ls.start) }

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
}

// Mark names an attempt timing.
type Mark int

// The attempt timings. First event, first visible text and terminal are
// marked by Append; request sent and first byte by the caller (Response
// marks first byte if it is still unset).
const (
	MarkSent Mark = iota
	MarkFirstByte
	MarkFirstEvent
	MarkFirstText
	MarkTerminal
	numMarks
)

var markColumn = [numMarks]string{"sent_us", "first_byte_us", "first_event_us", "first_text_us", "terminal_us"}

// Recorder records one attempt: its response, raw events and the
// canonical events derived from them, and its timings. Its methods may be
// called from any goroutine.
type Recorder struct {
	s        *SessionWriter
	aid      int64
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
	r := &Recorder{s: s, turn: turn, attempt: attempt, start: mono}
	var body any
	if m.Body != nil {
		body = m.Body
	}
	var protocol string
	err := w.exec(func(t *txn) error {
		if err := t.exec(`UPDATE sessions SET turns = max(turns, ?) WHERE sid = ?`, turn, s.ls.sid); err != nil {
			return err
		}
		st, err := t.stmt(`INSERT INTO attempts (sid, turn, attempt, protocol, started_at, start_us,
			method, url, request_headers, request_body, stream, retry_reason, snapshots)
			VALUES (?, ?, ?, coalesce(nullif(?, ''), (SELECT protocol FROM sessions WHERE sid = ?)), ?, ?, ?, ?, ?, ?, ?, ?, 1)
			RETURNING aid, protocol`)
		if err != nil {
			return err
		}
		return st.QueryRowContext(t.ctx,
			s.ls.sid, turn, attempt, m.Protocol, s.ls.sid, startedAt.UnixMilli(), startOff.Microseconds(),
			m.Method, Redact(m.URL), string(hdr), body, m.Stream, Redact(m.RetryReason)).Scan(&r.aid, &protocol)
	})
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
		return t.exec(`UPDATE attempts SET `+col+` = ? WHERE aid = ?`, us, aid)
	}
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
		return t.exec(`UPDATE attempts SET status_code = ?, response_headers = ? WHERE aid = ?`, status, string(hdr), aid)
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
		switch ev.Type {
		case adapters.EvTextDelta, adapters.EvRefusalDelta:
			if ev.Delta != "" {
				mark(MarkFirstText)
			}
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
	_, err := r.s.db.w.append(ls, n, terminal, func(seq int, ops []op) []op {
		queued = true
		if events == nil && len(evs) > 0 {
			events = r.s.db.w.encodeEvents(evs)
		}
		ops = append(ops, r.s.db.w.stepOp(stepOp{ls: ls, aid: aid, seq: seq, n: n, turn: turn, attempt: attempt,
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
					response_model = coalesce(nullif(?, ''), response_model) WHERE aid = ?`, id, model, aid); err != nil {
					return err
				}
				if model == "" {
					return nil
				}
				return t.exec(`UPDATE sessions SET model_reported = ? WHERE sid = ?`, model, ls.sid)
			}))
		}
		if usage != nil {
			ops = append(ops, usageOp(aid, usage))
		}
		if term != nil {
			status, reason := string(term.Status), string(term.StopReason)
			ops = append(ops, execOp(func(t *txn) error {
				return t.exec(`UPDATE attempts SET terminal_status = ?, stop_reason = ? WHERE aid = ?`, status, reason, aid)
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

func usageOp(aid int64, u *adapters.Usage) execOp {
	var pu any
	if len(u.ProviderUsage) > 0 {
		pu = string(u.ProviderUsage)
	}
	in, out, cr, cw, rs := nullInt(u.InputTokens), nullInt(u.OutputTokens), nullInt(u.CacheReadTokens), nullInt(u.CacheWriteTokens), nullInt(u.ReasoningTokens)
	return func(t *txn) error {
		return t.exec(`UPDATE attempts SET input_tokens = ?, output_tokens = ?, cache_read_tokens = ?,
			cache_write_tokens = ?, reasoning_tokens = ?, provider_usage = ? WHERE aid = ?`, in, out, cr, cw, rs, pu, aid)
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
	return r.s.db.w.exec(func(t *txn) error {
		return t.exec(`UPDATE attempts SET state = ?, error = ?, finished_us = ? WHERE aid = ?`, state, msg, us, aid)
	})
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

// Session-level entries of the timeline.

// Decision values.
const (
	DecisionApproved = "approved"
	DecisionEdited   = "edited"
	DecisionRejected = "rejected"
	DecisionAuto     = "auto"
)

// Decision is what was decided about one proposed tool call.
type Decision struct {
	Turn   int
	CallID string
	Name   string
	// Decision is approved, edited, rejected or auto.
	Decision string
	// Arguments are the model's original arguments; Edited the arguments
	// a person replaced them with (decision edited).
	Arguments json.RawMessage
	Edited    json.RawMessage
	Reason    string
	At        time.Time // defaults to now
}

// ToolResult is the result sent back for one call.
type ToolResult struct {
	Turn    int
	CallID  string
	Name    string
	Content string
	IsError bool
	At      time.Time // defaults to now
}

// Validation is one layer's verdict.
type Validation struct {
	Layer  string  `json:"layer"`
	Status Verdict `json:"status"`
	Detail string  `json:"detail"`
}

// decisionEvent is the timeline entry of a decision. Arguments are the
// ones the tool runs with (the edited ones when edited).
type decisionEvent struct {
	Type              string          `json:"type"`
	Turn              int             `json:"turn"`
	CallID            string          `json:"call_id"`
	Name              string          `json:"name"`
	Decision          string          `json:"decision"`
	Arguments         json.RawMessage `json:"arguments,omitempty"`
	OriginalArguments json.RawMessage `json:"original_arguments,omitempty"`
	Reason            string          `json:"reason,omitempty"`
	At                time.Time       `json:"at"`
}

type resultEvent struct {
	Type    string    `json:"type"`
	Turn    int       `json:"turn"`
	CallID  string    `json:"call_id"`
	Name    string    `json:"name"`
	IsError bool      `json:"is_error"`
	Content string    `json:"content"`
	At      time.Time `json:"at"`
}

type validationEvent struct {
	Type    string       `json:"type"`
	Turn    int          `json:"turn"`
	Results []Validation `json:"results"`
	At      time.Time    `json:"at"`
}

// Session-level entry types.
const (
	EntryDecision   = "tool.decision"
	EntryToolResult = "tool.result"
	EntryValidation = "validation"
)

// RecordDecision records a decision on a proposed call and commits it
// with everything recorded before it. Like Append, a failed commit keeps
// the entry queued for the next one: do not record it again.
func (s *SessionWriter) RecordDecision(d Decision) error {
	return s.recordDecision(d, s.sessionOffset(), nil)
}

// recordDecision records d at offset off; body, when not nil, is the
// entry as an import read it, kept byte for byte.
func (s *SessionWriter) recordDecision(d Decision, off time.Duration, body []byte) error {
	switch d.Decision {
	case DecisionApproved, DecisionEdited, DecisionRejected, DecisionAuto:
	default:
		return fmt.Errorf("store: decision %q: want approved, edited, rejected or auto", d.Decision)
	}
	if d.CallID == "" {
		return errors.New("store: a decision needs the call_id")
	}
	if d.Decision == DecisionEdited && len(d.Edited) == 0 {
		return errors.New("store: an edited decision needs the edited arguments")
	}
	for _, raw := range []json.RawMessage{d.Arguments, d.Edited} {
		if len(raw) > 0 && !json.Valid(raw) {
			return fmt.Errorf("store: decision on %s: arguments are not valid JSON", d.CallID)
		}
	}
	if d.At.IsZero() {
		d.At = time.Now()
	}
	if body == nil {
		ev := decisionEvent{Type: EntryDecision, Turn: d.Turn, CallID: d.CallID, Name: d.Name, Decision: d.Decision,
			Arguments: compactJSON(d.Arguments), Reason: d.Reason, At: d.At.UTC()}
		if len(d.Edited) > 0 {
			ev.Arguments, ev.OriginalArguments = compactJSON(d.Edited), compactJSON(d.Arguments)
		}
		var err error
		if body, err = encodeEntry(ev); err != nil {
			return err
		}
	}
	sid, orig, edited := s.ls.sid, nullText(compactJSON(d.Arguments)), nullText(compactJSON(d.Edited))
	return s.sessionEntry(d.Turn, off, body, func(seq int) execOp {
		return func(t *txn) error {
			return t.exec(`INSERT INTO tool_calls (sid, turn, call_id, name, arguments, decision, edited_arguments, reason, decided_at, decision_seq)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (sid, turn, call_id) DO UPDATE SET decision = excluded.decision,
				edited_arguments = excluded.edited_arguments, reason = excluded.reason, decided_at = excluded.decided_at,
				decision_seq = excluded.decision_seq, name = CASE WHEN tool_calls.name = '' THEN excluded.name ELSE tool_calls.name END,
				arguments = coalesce(tool_calls.arguments, excluded.arguments)`,
				sid, d.Turn, d.CallID, d.Name, orig, d.Decision, edited, d.Reason, d.At.UnixMilli(), seq)
		}
	})
}

// RecordToolResult records the result sent back for a call and commits
// it with everything recorded before it.
func (s *SessionWriter) RecordToolResult(r ToolResult) error {
	return s.recordToolResult(r, s.sessionOffset(), nil)
}

func (s *SessionWriter) recordToolResult(r ToolResult, off time.Duration, body []byte) error {
	if r.CallID == "" {
		return errors.New("store: a tool result needs the call_id")
	}
	if r.At.IsZero() {
		r.At = time.Now()
	}
	if body == nil {
		var err error
		if body, err = encodeEntry(resultEvent{Type: EntryToolResult, Turn: r.Turn, CallID: r.CallID, Name: r.Name,
			IsError: r.IsError, Content: r.Content, At: r.At.UTC()}); err != nil {
			return err
		}
	}
	sid := s.ls.sid
	return s.sessionEntry(r.Turn, off, body, func(seq int) execOp {
		return func(t *txn) error {
			return t.exec(`INSERT INTO tool_calls (sid, turn, call_id, name, result, is_error, result_at, result_seq)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (sid, turn, call_id) DO UPDATE SET result = excluded.result, is_error = excluded.is_error,
				result_at = excluded.result_at, result_seq = excluded.result_seq,
				name = CASE WHEN tool_calls.name = '' THEN excluded.name ELSE tool_calls.name END`,
				sid, r.Turn, r.CallID, r.Name, r.Content, r.IsError, r.At.UnixMilli(), seq)
		}
	})
}

// RecordValidation records the layers' verdicts for a turn (0 for the
// session as a whole) and commits them with everything before them.
func (s *SessionWriter) RecordValidation(turn int, results []Validation) error {
	return s.recordValidation(turn, results, time.Now(), s.sessionOffset(), nil)
}

func (s *SessionWriter) recordValidation(turn int, results []Validation, at time.Time, off time.Duration, body []byte) error {
	// A detail may quote a transport error, which quotes the URL.
	results = append([]Validation{}, results...)
	for i := range results {
		results[i].Detail = Redact(results[i].Detail)
	}
	if body != nil {
		body = []byte(Redact(string(body)))
	}
	for _, v := range results {
		if v.Status != "pass" && v.Status != "fail" && v.Status != "skip" {
			return fmt.Errorf("store: validation layer %q: status %q, want pass, fail or skip", v.Layer, v.Status)
		}
	}
	if body == nil {
		var err error
		if body, err = encodeEntry(validationEvent{Type: EntryValidation, Turn: turn, Results: results, At: at.UTC()}); err != nil {
			return err
		}
	}
	sid := s.ls.sid
	return s.sessionEntry(turn, off, body, func(seq int) execOp {
		return func(t *txn) error {
			for i, v := range results {
				if _, err := t.w.insertValRow.ExecContext(t.ctx, sid, seq, i, turn, v.Layer, v.Status, v.Detail); err != nil {
					return err
				}
			}
			return nil
		}
	})
}

// sessionEntry appends one session-level timeline entry with its table
// write, and commits.
func (s *SessionWriter) sessionEntry(turn int, off time.Duration, body []byte, table func(seq int) execOp) error {
	ls := s.ls
	_, err := s.db.w.append(ls, 1, true, func(seq int, b []op) []op {
		return append(b,
			&stepOp{ls: ls, seq: seq, n: 1, turn: turn, offsetUS: off.Microseconds(), rawIndex: -1, events: body},
			table(seq))
	})
	return err
}

// encodeEntry encodes a session-level entry as a one-element array, the
// shape of a step's events.
func encodeEntry(v any) ([]byte, error) { return adapters.MarshalBody([]any{v}) }

func compactJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

func nullText(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return string(raw)
}

// sweep marks running sessions whose writer is gone as interrupted (in a
// read-only handle it only reports them) and returns their ids.
func (db *DB) sweep(ctx context.Context) (map[string]bool, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT sid, id, writer_pid, writer_token FROM sessions WHERE status = 'running'`)
	if err != nil {
		return nil, err
	}
	type cand struct {
		sid int64
		id  string
	}
	var dead []cand
	for rows.Next() {
		var c cand
		var pid int
		var token string
		if err := rows.Scan(&c.sid, &c.id, &pid, &token); err != nil {
			rows.Close()
			return nil, err
		}
		if !writerAlive(pid, token) {
			dead = append(dead, c)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(dead))
	for _, c := range dead {
		out[c.id] = true
	}
	if len(dead) == 0 || db.w == nil {
		return out, nil
	}
	return out, db.w.exec(func(t *txn) error {
		for _, c := range dead {
			if err := t.exec(sqlInterruptSession, c.sid); err != nil {
				return err
			}
			if err := t.exec(sqlInterruptAttempts, c.sid); err != nil {
				return err
			}
		}
		return nil
	})
}
