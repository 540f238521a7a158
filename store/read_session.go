package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelwire/modelwire/adapters"
)

// Session is one session in full, without its timeline.
type Session struct {
	SessionInfo // its Manifest read whole
	Attempts    []Attempt
	Calls       []Call
	Validations []ValidationRecord
}

// Timings are an attempt's offsets from its start; nil where the moment
// never came (or, for FirstToken, was recorded before it was measured).
// FirstByte is the first response: the headers arrived. Server is the
// provider's own figure (ServerSource names its header), from another
// clock: never one of the client's points.
type Timings struct {
	Sent, FirstByte, FirstEvent, FirstText, Terminal, Finished *time.Duration
	FirstToken, Server                                         *time.Duration
	ServerSource                                               string
}

// Attempt is one HTTP attempt.
type Attempt struct {
	Turn, Attempt int
	Protocol      string
	StartedAt     time.Time
	Start         time.Duration // from the session's start
	Method        string
	URL           string
	RequestHeader http.Header
	RequestBody   []byte
	Stream        bool
	RetryReason   string
	// Reasoning is the request's reasoning setting (AttemptMeta.Reasoning);
	// nil when not known.
	Reasoning      *string
	StatusCode     int
	ResponseHeader http.Header
	Error          string
	State          Status // running, done, failed, interrupted
	TerminalStatus adapters.Status
	StopReason     adapters.StopReason
	ResponseID     string
	ResponseModel  string
	Timings        Timings
	Usage          *adapters.Usage // nil when none was reported
	RawEvents      int
	FirstSeq       int // its first and last timeline entries (0: none)
	LastSeq        int
}

// Call is a proposed tool call with its decision and result, if any.
type Call struct {
	Turn        int
	CallID      string
	Name        string
	Arguments   json.RawMessage // as proposed
	ProposedSeq int             // 0 when no tool.proposed was recorded
	Decision    DecisionKind    // "" while undecided
	Edited      json.RawMessage
	Reason      string
	DecidedAt   time.Time
	DecisionSeq int
	HasResult   bool
	Result      string
	IsError     bool
	ResultAt    time.Time
	ResultSeq   int
}

// ValidationRecord is one layer's verdict as recorded at entry Seq.
type ValidationRecord struct {
	Seq  int
	Turn int
	Validation
}

// GetSession reads a session's metadata, attempts, calls and validations.
func (db *DB) GetSession(id string) (*Session, error) {
	ctx := context.Background()
	dead, err := db.sweep(ctx)
	if err != nil {
		return nil, err
	}
	// The token counts are summed from the attempts read below, not by
	// five subqueries that would read them all again.
	row := db.sql.QueryRowContext(ctx, `SELECT `+db.sessionColsWith(`0, 0, 0, 0, 0, 0, 0, `)+`, manifest, sid FROM sessions WHERE id = ?`, id)
	var s Session
	var manifest string
	var sid int64
	s.SessionInfo, err = scanSession(row, &manifest, &sid)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &NotFoundError{ID: id}
	}
	if err != nil {
		return nil, err
	}
	if dead[s.ID] {
		s.Status = StatusInterrupted
	}
	s.Manifest = Manifest{}
	_ = json.Unmarshal([]byte(manifest), &s.Manifest)
	s.Manifest.fillFromRow(&s.SessionInfo)
	if s.Attempts, err = db.attempts(ctx, sid, dead[s.ID], s.Turns); err != nil {
		return nil, err
	}
	for _, a := range s.Attempts {
		if u := a.Usage; u != nil {
			for _, c := range []struct{ sum, n *int64 }{{&s.InputTokens, u.InputTokens}, {&s.OutputTokens, u.OutputTokens},
				{&s.CacheReadTokens, u.CacheReadTokens}, {&s.CacheWriteTokens, u.CacheWriteTokens}, {&s.ReasoningTokens, u.ReasoningTokens},
				{&s.CacheWrite1hTokens, u.CacheWrite1hTokens}, {&s.WebSearchCalls, u.WebSearchCalls}} {
				if c.n != nil {
					*c.sum += *c.n
				}
			}
		}
	}
	if s.Calls, err = db.calls(ctx, sid, -1); err != nil {
		return nil, err
	}
	if s.Validations, err = db.validations(ctx, sid, -1); err != nil {
		return nil, err
	}
	if err := db.checkTurns(ctx, sid, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// checkTurns refuses a session whose rows name a turn it cannot hold.
// Turns are numbered from 1 and every turn has a row (its attempt, a
// fork's copied ones included), so no turn number exceeds the rows read;
// readers index turns densely (a replay's records and turn starts), and a
// crafted turn of 2·10⁹ would otherwise have them allocate gigabytes. The
// stored counts (turns, events) are checked the same way: they are what
// the file says, the rows and chunks are what it holds. (The chunks'
// entry numbers are the file's word too, so they bound only the count of
// entries, never a turn.)
func (db *DB) checkTurns(ctx context.Context, sid int64, s *Session) error {
	var held int
	if err := db.sql.QueryRowContext(ctx, `SELECT coalesce(max(last_seq), 0) FROM chunks WHERE sid = ?`, sid).Scan(&held); err != nil {
		return err
	}
	bound := len(s.Attempts) + len(s.Calls) + len(s.Validations)
	bad := func(what string, turn int) error {
		return &DamagedError{ID: s.ID, Detail: fmt.Sprintf("%s names turn %d, but the session holds %d records of its turns", what, turn, bound)}
	}
	for _, a := range s.Attempts {
		if a.Turn < 0 || a.Turn > bound {
			return bad("an attempt", a.Turn)
		}
	}
	for _, c := range s.Calls {
		if c.Turn < 0 || c.Turn > bound {
			return bad("a tool call", c.Turn)
		}
	}
	for _, v := range s.Validations {
		if v.Turn < 0 || v.Turn > bound {
			return bad("a validation", v.Turn)
		}
	}
	if s.Turns < 0 || s.Turns > bound {
		return bad("its turn count", s.Turns)
	}
	if s.Events < 0 || s.Events > held {
		return &DamagedError{ID: s.ID, Detail: fmt.Sprintf("its entry count is %d, but %d entries are stored", s.Events, held)}
	}
	return nil
}

// An attempt's record is read as two columns: its request body, and the
// rest packed into one text value by SQLite (attemptColumns) — the
// driver makes several locked calls and an allocation per column and
// row, which made reading a long session's 1,000 attempts, most of what
// opening it for replay costs, three times slower over 35 columns.
// Integers are packed as decimals ending in ',' (nothing for NULL),
// texts as their length in bytes, ':' and the bytes ('-' for NULL).
var (
	attemptInts = []string{"aid", "turn", "attempt", "started_at", "start_us", "stream", "status_code",
		"sent_us", "first_byte_us", "first_event_us", "first_text_us", "terminal_us", "finished_us",
		"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
		"raw_events", "first_seq", "last_seq", "first_token_us", "server_us", "cache_write_1h_tokens", "web_search_calls"}
	attemptTexts = []string{"protocol", "method", "url", "request_headers", "retry_reason", "response_headers", "error",
		"state", "terminal_status", "stop_reason", "response_id", "response_model", "provider_usage", "server_source",
		"reasoning_setting"}
	attemptColumns = packedColumns(attemptInts, attemptTexts) + ", request_body"
	// attemptColumns5 reads a file of schema 5 (opened read-only, as it is),
	// which has no reasoning_setting.
	attemptColumns5 = packedColumns(attemptInts, append(attemptTexts[:len(attemptTexts)-1:len(attemptTexts)-1], "NULL")) + ", request_body"
)

// packedColumns is the SQL expression packing ints and texts: one
// concat (which reads NULL as empty), not a chain of || that copies the
// growing value at each step.
func packedColumns(ints, texts []string) string {
	var args []string
	for _, c := range ints {
		args = append(args, c, "','")
	}
	for _, c := range texts {
		args = append(args, "ifnull(octet_length("+c+") || ':', '-')", c)
	}
	return "concat(" + strings.Join(args, ", ") + ")"
}

// unpacker reads the fields of a packedColumns value in order; the first
// malformed field sets err.
type unpacker struct {
	s   string
	err error
}

func (u *unpacker) int() (v int64, ok bool) {
	i := strings.IndexByte(u.s, ',')
	if i < 0 {
		u.fail()
		return 0, false
	}
	f := u.s[:i]
	u.s = u.s[i+1:]
	if f == "" {
		return 0, false
	}
	v, err := strconv.ParseInt(f, 10, 64)
	if err != nil {
		u.fail()
	}
	return v, err == nil
}

func (u *unpacker) text() (v string, ok bool) {
	if strings.HasPrefix(u.s, "-") {
		u.s = u.s[1:]
		return "", false
	}
	i := strings.IndexByte(u.s, ':')
	n, err := strconv.Atoi(u.s[:max(i, 0)])
	if i < 0 || err != nil || n < 0 || n > len(u.s)-i-1 {
		u.fail()
		return "", false
	}
	v, u.s = u.s[i+1:i+1+n], u.s[i+1+n:]
	return v, true
}

func (u *unpacker) fail() {
	if u.err == nil {
		u.err = fmt.Errorf("malformed packed record at %q", u.s[:min(len(u.s), 20)])
	}
	u.s = ""
}

type attemptRow struct {
	aid int64
	Attempt
}

func scanAttempt(sc interface{ Scan(...any) error }) (attemptRow, error) {
	var a attemptRow
	var packed string
	var body []byte // scanned apart: &a.RequestBody would move all of a to the heap
	if err := sc.Scan(&packed, &body); err != nil {
		return a, err
	}
	a.RequestBody = body
	u := unpacker{s: packed}
	var n [25]int64
	var null [25]bool
	for i := range n {
		var ok bool
		n[i], ok = u.int()
		null[i] = !ok
	}
	var t [15]string
	var has [15]bool
	for i := range t {
		t[i], has[i] = u.text()
	}
	providerUsage := has[12]
	a.Timings.ServerSource = t[13]
	if has[14] {
		a.Reasoning = &t[14]
	}
	if u.err != nil {
		return a, fmt.Errorf("attempt record: %w", u.err)
	}
	a.aid, a.Turn, a.Attempt.Attempt = n[0], int(n[1]), int(n[2])
	a.StartedAt = time.UnixMilli(n[3])
	a.Start = time.Duration(n[4]) * time.Microsecond
	a.Stream, a.StatusCode = n[5] != 0, int(n[6])
	a.RawEvents, a.FirstSeq, a.LastSeq = int(n[18]), int(n[19]), int(n[20])
	a.Protocol, a.Method, a.URL, a.RetryReason, a.Error = t[0], t[1], t[2], t[4], t[6]
	a.State, a.TerminalStatus, a.StopReason = Status(t[7]), adapters.Status(t[8]), adapters.StopReason(t[9])
	a.ResponseID, a.ResponseModel = t[10], t[11]
	a.RequestHeader = decodeHeader(t[3])
	a.ResponseHeader = decodeHeader(t[5])
	// The marks and the usage point into one array each rather than one
	// allocation a field.
	marks := new([8]time.Duration)
	for i, dst := range []**time.Duration{&a.Timings.Sent, &a.Timings.FirstByte, &a.Timings.FirstEvent, &a.Timings.FirstText,
		&a.Timings.Terminal, &a.Timings.Finished} {
		if !null[7+i] {
			marks[i] = time.Duration(n[7+i]) * time.Microsecond
			*dst = &marks[i]
		}
	}
	for i, dst := range []**time.Duration{&a.Timings.FirstToken, &a.Timings.Server} {
		if !null[21+i] {
			marks[6+i] = time.Duration(n[21+i]) * time.Microsecond
			*dst = &marks[6+i]
		}
	}
	if !providerUsage && !slices.Contains(null[13:18], false) && null[23] && null[24] {
		return a, nil // no usage reported
	}
	u2 := &adapters.Usage{}
	tokens := new([7]int64)
	for i, p := range []**int64{&u2.InputTokens, &u2.OutputTokens, &u2.CacheReadTokens, &u2.CacheWriteTokens, &u2.ReasoningTokens} {
		if !null[13+i] {
			tokens[i] = n[13+i]
			*p = &tokens[i]
		}
	}
	for i, p := range []**int64{&u2.CacheWrite1hTokens, &u2.WebSearchCalls} {
		if !null[23+i] {
			tokens[5+i] = n[23+i]
			*p = &tokens[5+i]
		}
	}
	if providerUsage {
		u2.ProviderUsage = json.RawMessage(t[12])
	}
	a.Usage = u2
	return a, nil
}

// decodeHeader decodes a stored header map; "{}", what most records hold,
// without the JSON decoder.
func decodeHeader(s string) http.Header {
	if s == "{}" {
		return http.Header{}
	}
	var h http.Header
	_ = json.Unmarshal([]byte(s), &h)
	return h
}

// maxHint bounds a capacity taken from a stored count.
const maxHint = 4096

// attempts reads a session's attempts in the order they were recorded;
// hint is how many there may be (its turns).
func (db *DB) attempts(ctx context.Context, sid int64, interrupted bool, hint int) ([]Attempt, error) {
	// In the order of the (sid, turn, attempt) index, put in aid order
	// here: ORDER BY aid made SQLite copy every row into a temporary
	// b-tree and sort it first, a third of the read.
	cols := attemptColumns
	if db.schema < 6 {
		cols = attemptColumns5
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT `+cols+` FROM attempts WHERE sid = ? ORDER BY turn, attempt`, sid)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	// The hint is the stored turn count: a number from the file, not a
	// length, so it only sizes a first allocation within reason.
	hint = min(max(hint, 0), maxHint)
	out := make([]Attempt, 0, hint)
	aids := make([]int64, 0, hint)
	for rows.Next() {
		a, err := scanAttempt(rows)
		if err != nil {
			return nil, err
		}
		if interrupted && a.State == StatusRunning {
			a.State = StatusInterrupted
		}
		out, aids = append(out, a.Attempt), append(aids, a.aid)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if !slices.IsSorted(aids) { // a turn recorded after a later one
		byAid := make([]attemptRow, len(out))
		for i := range out {
			byAid[i] = attemptRow{aids[i], out[i]}
		}
		slices.SortFunc(byAid, func(a, b attemptRow) int { return cmp.Compare(a.aid, b.aid) })
		for i, r := range byAid {
			out[i] = r.Attempt
		}
	}
	return out, nil
}

// calls reads the tool calls as they stood after entry upto (-1: all).
func (db *DB) calls(ctx context.Context, sid int64, upto int) ([]Call, error) {
	limit := upto
	if limit < 0 {
		limit = int(^uint(0) >> 1)
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT turn, call_id, name, arguments, coalesce(proposed_seq, 0), decision, edited_arguments,
		reason, coalesce(decided_at, 0), coalesce(decision_seq, 0), result, coalesce(is_error, 0), coalesce(result_at, 0),
		coalesce(result_seq, 0)
		FROM tool_calls WHERE sid = ? AND min(coalesce(proposed_seq, 1e18), coalesce(decision_seq, 1e18), coalesce(result_seq, 1e18)) <= ?
		ORDER BY min(coalesce(proposed_seq, 1e18), coalesce(decision_seq, 1e18), coalesce(result_seq, 1e18))`, sid, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Call
	for rows.Next() {
		var c Call
		var args, edited, result sql.NullString
		var decided, resultAt int64
		if err := rows.Scan(&c.Turn, &c.CallID, &c.Name, &args, &c.ProposedSeq, &c.Decision, &edited, &c.Reason, &decided,
			&c.DecisionSeq, &result, &c.IsError, &resultAt, &c.ResultSeq); err != nil {
			return nil, err
		}
		if args.Valid {
			c.Arguments = json.RawMessage(args.String)
		}
		if c.ProposedSeq > limit {
			c.ProposedSeq = 0
		}
		if c.DecisionSeq > 0 && c.DecisionSeq <= limit {
			if edited.Valid {
				c.Edited = json.RawMessage(edited.String)
			}
			c.DecidedAt = time.UnixMilli(decided)
		} else {
			c.Decision, c.Reason, c.DecisionSeq = "", "", 0
		}
		if result.Valid && c.ResultSeq > 0 && c.ResultSeq <= limit {
			c.HasResult, c.Result, c.ResultAt = true, result.String, time.UnixMilli(resultAt)
		} else {
			c.IsError, c.ResultSeq = false, 0
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// validations reads validation rows recorded up to entry upto (-1: all).
func (db *DB) validations(ctx context.Context, sid int64, upto int) ([]ValidationRecord, error) {
	limit := upto
	if limit < 0 {
		limit = int(^uint(0) >> 1)
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT seq, turn, layer, status, detail FROM validations
		WHERE sid = ? AND seq <= ? ORDER BY seq, ord`, sid, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ValidationRecord
	for rows.Next() {
		var v ValidationRecord
		if err := rows.Scan(&v.Seq, &v.Turn, &v.Layer, &v.Status, &v.Detail); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// TurnUsage is the usage of one turn: the sum over its attempts (a failed
// attempt that reported usage was paid for too).
type TurnUsage struct {
	Turn int
	adapters.Usage
}

// Usage sums the attempts' usage per turn, in turn order. A class no
// attempt of the turn reported stays nil.
func (s *Session) Usage() []TurnUsage {
	var out []TurnUsage
	for _, a := range s.Attempts {
		if a.Usage == nil {
			continue
		}
		if len(out) == 0 || out[len(out)-1].Turn != a.Turn {
			out = append(out, TurnUsage{Turn: a.Turn})
		}
		t := &out[len(out)-1]
		add := func(dst **int64, v *int64) {
			if v == nil {
				return
			}
			if *dst == nil {
				*dst = adapters.Int(0)
			}
			**dst += *v
		}
		add(&t.InputTokens, a.Usage.InputTokens)
		add(&t.OutputTokens, a.Usage.OutputTokens)
		add(&t.CacheReadTokens, a.Usage.CacheReadTokens)
		add(&t.CacheWriteTokens, a.Usage.CacheWriteTokens)
		add(&t.ReasoningTokens, a.Usage.ReasoningTokens)
	}
	return out
}

// DeleteSession removes a session and everything recorded for it.
func (db *DB) DeleteSession(id string) error {
	if db.w == nil {
		return errors.New("store: the database is open read-only")
	}
	// A copy's row may still wait for the batch (SessionMeta.Copy).
	if err := db.w.flush(); err != nil {
		return err
	}
	sid, err := db.sid(context.Background(), id)
	if err != nil {
		return err
	}
	db.w.mu.Lock()
	ls := db.w.sessions[sid]
	if ls != nil && !ls.finished {
		db.w.mu.Unlock()
		return errors.New("store: session " + id + " is being recorded")
	}
	delete(db.w.sessions, sid)
	db.w.mu.Unlock()
	return db.w.exec(func(t *txn) error {
		var status Status
		if err := t.w.conn.QueryRowContext(t.ctx, `SELECT status FROM sessions WHERE sid = ?`, sid).Scan(&status); err != nil {
			return err
		}
		if status == StatusRunning {
			return errors.New("store: session " + id + " is being recorded")
		}
		return t.exec(`DELETE FROM sessions WHERE sid = ?`, sid)
	})
}
