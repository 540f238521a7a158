package store

import (
	"bytes"
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
	"sync"
	"time"

	"github.com/modelwire/modelwire/adapters"
)

// SessionInfo is a session as listed.
type SessionInfo struct {
	ID            string
	CreatedAt     time.Time
	FinishedAt    time.Time // zero while running or when interrupted
	Status        Status
	Title         string
	Scenario      string
	Variant       string
	Protocol      string
	Provider      string
	Model         string // asked for
	ModelReported string // as the provider named it
	BaseURL       string
	Source        string
	Version       string // modelwire version that recorded it
	Turns         int
	Events        int    // timeline entries
	ParentID      string // the session this one was made from ("" for none)

	// For the list: the faults the simulator was asked for, the first
	// layer that failed in the last validation, the tokens of every
	// attempt (the cache and reasoning counts are parts of input and
	// output, as in adapters.Usage; they price the session).
	Faults                    []string
	FailedLayer               string
	InputTokens, OutputTokens int64
	CacheReadTokens           int64
	CacheWriteTokens          int64
	ReasoningTokens           int64
}

// Duration is how long the session ran (0 while it runs, or when it was
// interrupted).
func (s SessionInfo) Duration() time.Duration {
	if s.FinishedAt.IsZero() {
		return 0
	}
	return s.FinishedAt.Sub(s.CreatedAt)
}

// ScenarioName is the scenario as the contract names it: "refund" or
// "refund/<variant>".
func (s SessionInfo) ScenarioName() string {
	if s.Variant == "" {
		return s.Scenario
	}
	return s.Scenario + "/" + s.Variant
}

// Origin is what a session ran: its scenario, or for a recorded one
// (proxy, HAR) where it was recorded from: "proxy → api.openai.com",
// "proxy → sim" for the built-in simulator (its port is an internal detail).
func (s SessionInfo) Origin() string {
	if name := s.ScenarioName(); name != "" || (s.Source != "proxy" && s.Source != "har") {
		return name
	}
	host := s.Provider
	if s.Provider != adapters.ProviderSim {
		if i := strings.Index(s.BaseURL, "://"); i >= 0 {
			host, _, _ = strings.Cut(s.BaseURL[i+3:], "/")
		}
	}
	if host == "" {
		return s.Source
	}
	return s.Source + " → " + host
}

// ModelShown is the model to list: the one the provider reported answering
// with (an alias resolved, a proxy's real model), else the one asked for.
func (s SessionInfo) ModelShown() string {
	if s.ModelReported != "" {
		return s.ModelReported
	}
	return s.Model
}

// Filter selects sessions; empty fields match everything.
type Filter struct {
	// Scenario matches the scenario ("refund" matches its variants too) or
	// the full "refund/<variant>".
	Scenario string
	Protocol string
	Provider string
	Status   Status
	// Search is text in the title (or the scenario).
	Search string
	// Content is text anywhere in what was exchanged: a request body, a
	// tool call's arguments or result, a stored event (an answer's text
	// matches where one event carries it whole).
	Content string
	// Limit caps the result (0: no cap).
	Limit int
}

const sessionColumns = `id, created_at, coalesce(finished_at, 0), status, title, scenario, variant, protocol, provider,
	model, model_reported, base_url, source, modelwire_version, turns, events,
	coalesce(json_extract(manifest, '$.parameters.faults'), ''),
	coalesce((SELECT layer FROM validations v WHERE v.sid = sessions.sid AND v.status = 'fail'
		AND v.seq = (SELECT max(seq) FROM validations w WHERE w.sid = sessions.sid) ORDER BY v.ord LIMIT 1), ''), `

// tokenSums are the session's token counts, the sums over its attempts
// (sessionColumns' last five).
const tokenSums = `(SELECT coalesce(sum(input_tokens), 0) FROM attempts a WHERE a.sid = sessions.sid),
	(SELECT coalesce(sum(output_tokens), 0) FROM attempts a WHERE a.sid = sessions.sid),
	(SELECT coalesce(sum(cache_read_tokens), 0) FROM attempts a WHERE a.sid = sessions.sid),
	(SELECT coalesce(sum(cache_write_tokens), 0) FROM attempts a WHERE a.sid = sessions.sid),
	(SELECT coalesce(sum(reasoning_tokens), 0) FROM attempts a WHERE a.sid = sessions.sid), `

// chunkSteps is the SQL expression of a chunk c's steps text (compressed
// rows, schema 4, through modelwire_chunk_steps: see codec.go).
func (db *DB) chunkSteps() string {
	if db.schema < 4 {
		return `c.steps`
	}
	return `modelwire_chunk_steps(c.steps, c.codec)`
}

// chunkCodec is the SQL expression of a chunk row's codec: a reader of
// steps or raws selects it and passes both to decodeChunkColumn. A file
// older than schema 4 (opened read-only, as it is) has no codec column.
func (db *DB) chunkCodec() string {
	if db.schema < 4 {
		return `0`
	}
	return `codec`
}

// sessionCols are the columns scanSession reads; a file older than schema
// 3 (opened read-only, as it is) has no parent_id.
func (db *DB) sessionCols() string {
	return db.sessionColsWith(tokenSums)
}

// sessionColsWith is sessionCols with tokens for its token counts.
func (db *DB) sessionColsWith(tokens string) string {
	if db.schema < 3 {
		return sessionColumns + tokens + `''`
	}
	return sessionColumns + tokens + `parent_id`
}

// scanSession reads the sessionCols of a row, then extra columns.
func scanSession(sc interface{ Scan(...any) error }, extra ...any) (SessionInfo, error) {
	var s SessionInfo
	var created, finished int64
	var faults string
	err := sc.Scan(append([]any{&s.ID, &created, &finished, &s.Status, &s.Title, &s.Scenario, &s.Variant, &s.Protocol, &s.Provider,
		&s.Model, &s.ModelReported, &s.BaseURL, &s.Source, &s.Version, &s.Turns, &s.Events,
		&faults, &s.FailedLayer, &s.InputTokens, &s.OutputTokens, &s.CacheReadTokens, &s.CacheWriteTokens, &s.ReasoningTokens, &s.ParentID}, extra...)...)
	s.CreatedAt = time.UnixMilli(created)
	if finished != 0 {
		s.FinishedAt = time.UnixMilli(finished)
	}
	s.Faults = faultList(faults)
	return s, err
}

// faultList reads the faults a session's parameters name: a JSON array
// (the workbench) or a comma-separated string (run).
func faultList(v string) []string {
	var list []string
	if strings.HasPrefix(v, "[") {
		_ = json.Unmarshal([]byte(v), &list)
	} else {
		list = strings.Split(v, ",")
	}
	out := list[:0]
	for _, f := range list {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// likePattern matches text anywhere, its own %, _ and \ taken literally
// (LIKE is case-insensitive for ASCII letters only).
func likePattern(text string) string {
	return "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(text) + "%"
}

// ListSessions lists sessions newest first. Sessions whose writer is gone
// are reported (and, unless read-only, marked) interrupted first.
func (db *DB) ListSessions(f Filter) ([]SessionInfo, error) {
	ctx := context.Background()
	dead, err := db.sweep(ctx)
	if err != nil {
		return nil, err
	}
	var where []string
	var args []any
	if f.Scenario != "" {
		where = append(where, `(scenario = ? OR scenario || '/' || variant = ?)`)
		args = append(args, f.Scenario, f.Scenario)
	}
	for _, c := range []struct{ col, val string }{{"protocol", f.Protocol}, {"provider", f.Provider}} {
		if c.val != "" {
			where = append(where, c.col+` = ?`)
			args = append(args, c.val)
		}
	}
	if f.Status != "" && len(dead) == 0 {
		where = append(where, `status = ?`)
		args = append(args, f.Status)
	}
	if f.Search != "" {
		pat := likePattern(f.Search)
		where = append(where, `(title LIKE ? ESCAPE '\' OR scenario LIKE ? ESCAPE '\')`)
		args = append(args, pat, pat)
	}
	if f.Content != "" {
		pat := likePattern(f.Content)
		where = append(where, `(EXISTS (SELECT 1 FROM attempts a WHERE a.sid = sessions.sid AND CAST(a.request_body AS TEXT) LIKE ? ESCAPE '\')
			OR EXISTS (SELECT 1 FROM tool_calls t WHERE t.sid = sessions.sid AND (t.arguments LIKE ? ESCAPE '\' OR t.result LIKE ? ESCAPE '\'))
			OR EXISTS (SELECT 1 FROM chunks c WHERE c.sid = sessions.sid AND `+db.chunkSteps()+` LIKE ? ESCAPE '\'))`)
		args = append(args, pat, pat, pat, pat)
	}
	q := `SELECT ` + db.sessionCols() + ` FROM sessions`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	q += ` ORDER BY created_at DESC, id DESC`
	rows, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []SessionInfo
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, err
		}
		if dead[s.ID] {
			s.Status = StatusInterrupted
		}
		if f.Status != "" && s.Status != f.Status {
			continue
		}
		out = append(out, s)
		if f.Limit > 0 && len(out) == f.Limit {
			break
		}
	}
	return out, rows.Err()
}

// Resolve turns an id or a unique prefix of one (case-insensitive) into
// the session's id.
func (db *DB) Resolve(prefix string) (string, error) {
	p := normalizeID(prefix)
	if !validIDPrefix(p) {
		// Imported sessions keep their ids, which may be of another form.
		var id string
		err := db.sql.QueryRow(`SELECT id FROM sessions WHERE id = ?`, prefix).Scan(&id)
		if err == nil {
			return id, nil
		}
		return "", &NotFoundError{ID: prefix}
	}
	rows, err := db.sql.Query(`SELECT id FROM sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT 6`, p, p+"~")
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return "", err
		}
		if id == p {
			return id, nil
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	switch len(ids) {
	case 0:
		return "", &NotFoundError{ID: prefix}
	case 1:
		return ids[0], nil
	}
	if len(ids) > 5 {
		ids = append(ids[:5], "…")
	}
	return "", &AmbiguousError{Prefix: prefix, Matches: ids}
}

// sid looks up a session's row id.
func (db *DB) sid(ctx context.Context, id string) (int64, error) {
	var sid int64
	err := db.sql.QueryRowContext(ctx, `SELECT sid FROM sessions WHERE id = ?`, id).Scan(&sid)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, &NotFoundError{ID: id}
	}
	return sid, err
}

// Session is one session in full, without its timeline.
type Session struct {
	SessionInfo
	Manifest    Manifest
	Attempts    []Attempt
	Calls       []Call
	Validations []ValidationRecord
}

// Timings are an attempt's offsets from its start; nil where the moment
// never came.
type Timings struct {
	Sent, FirstByte, FirstEvent, FirstText, Terminal, Finished *time.Duration
}

// Attempt is one HTTP attempt.
type Attempt struct {
	Turn, Attempt  int
	Protocol       string
	StartedAt      time.Time
	Start          time.Duration // from the session's start
	Method         string
	URL            string
	RequestHeader  http.Header
	RequestBody    []byte
	Stream         bool
	RetryReason    string
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
	Decision    string          // "" while undecided
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
	row := db.sql.QueryRowContext(ctx, `SELECT `+db.sessionColsWith(`0, 0, 0, 0, 0, `)+`, manifest, sid FROM sessions WHERE id = ?`, id)
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
	_ = json.Unmarshal([]byte(manifest), &s.Manifest)
	if s.Attempts, err = db.attempts(ctx, sid, dead[s.ID], s.Turns); err != nil {
		return nil, err
	}
	for _, a := range s.Attempts {
		if u := a.Usage; u != nil {
			for _, c := range []struct{ sum, n *int64 }{{&s.InputTokens, u.InputTokens}, {&s.OutputTokens, u.OutputTokens},
				{&s.CacheReadTokens, u.CacheReadTokens}, {&s.CacheWriteTokens, u.CacheWriteTokens}, {&s.ReasoningTokens, u.ReasoningTokens}} {
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
		"raw_events", "first_seq", "last_seq"}
	attemptTexts = []string{"protocol", "method", "url", "request_headers", "retry_reason", "response_headers", "error",
		"state", "terminal_status", "stop_reason", "response_id", "response_model", "provider_usage"}
	attemptColumns = packedColumns(attemptInts, attemptTexts) + ", request_body"
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
	var n [21]int64
	var null [21]bool
	for i := range n {
		var ok bool
		n[i], ok = u.int()
		null[i] = !ok
	}
	var t [13]string
	var providerUsage bool
	for i := range t {
		t[i], providerUsage = u.text()
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
	marks := new([6]time.Duration)
	for i, dst := range []**time.Duration{&a.Timings.Sent, &a.Timings.FirstByte, &a.Timings.FirstEvent, &a.Timings.FirstText,
		&a.Timings.Terminal, &a.Timings.Finished} {
		if !null[7+i] {
			marks[i] = time.Duration(n[7+i]) * time.Microsecond
			*dst = &marks[i]
		}
	}
	if !providerUsage && !slices.Contains(null[13:18], false) {
		return a, nil // no usage reported
	}
	u2 := &adapters.Usage{}
	tokens := new([5]int64)
	for i, p := range []**int64{&u2.InputTokens, &u2.OutputTokens, &u2.CacheReadTokens, &u2.CacheWriteTokens, &u2.ReasoningTokens} {
		if !null[13+i] {
			tokens[i] = n[13+i]
			*p = &tokens[i]
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
	rows, err := db.sql.QueryContext(ctx, `SELECT `+attemptColumns+` FROM attempts WHERE sid = ? ORDER BY turn, attempt`, sid)
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

// The timeline.

// Entry is one entry of a session's timeline: a canonical event with the
// raw event it came from, a raw event that produced no canonical event,
// the end of an attempt's input (canonical events without a raw event), or
// a session-level entry (a decision, a tool result, a validation).
type Entry struct {
	Seq     int
	Turn    int
	Attempt int // 0 for a session-level entry
	// Offset is monotonic time from the attempt's start (from the
	// session's start for a session-level entry).
	Offset time.Duration
	// RawIndex numbers the attempt's raw events from 0; -1 without one.
	RawIndex int
	// Raw is the raw event; the entries derived from one raw event share it.
	Raw *adapters.RawEvent
	// Type is the canonical event's type, or EntryDecision, EntryToolResult,
	// EntryValidation; "" when there is no event.
	Type string
	// Event is the event as stored (JSON), nil when there is none.
	Event json.RawMessage
}

// Canonical decodes the entry's canonical event; ok is false for entries
// without one and for session-level entries.
func (e Entry) Canonical() (ev adapters.Event, ok bool, err error) {
	if e.Event == nil || e.Attempt == 0 {
		return ev, false, nil
	}
	if ev, ok := decodePlainEvent(e.Event); ok {
		return ev, true, nil
	}
	err = json.Unmarshal(e.Event, &ev)
	return ev, err == nil, err
}

// plainKeys are the string fields appendPlainEvents writes after seq and
// type, in its order.
var plainKeys = [...]string{`,"response_id":"`, `,"model":"`, `,"item_id":"`, `,"kind":"`, `,"call_id":"`, `,"name":"`,
	`,"delta":"`, `,"final":"`, `,"signature":"`, `,"status":"`, `,"stop_reason":"`, `,"provider_stop_reason":"`,
	`,"raw_type":"`, `,"detail":"`}

// decodePlainEvent reads an event appendPlainEvents wrote, whose strings
// hold no escape, without the JSON decoder: a replay decodes every entry
// it folds, nearly all of them deltas. ok is false for anything else,
// for json.Unmarshal.
func decodePlainEvent(b []byte) (ev adapters.Event, ok bool) {
	rest, ok := bytes.CutPrefix(b, []byte(`{"seq":`))
	if !ok {
		return ev, false
	}
	n := 0
	for ; n < len(rest) && n < 18 && rest[n] >= '0' && rest[n] <= '9'; n++ {
		ev.Seq = ev.Seq*10 + int(rest[n]-'0')
	}
	if n == 0 {
		return ev, false
	}
	str := func(key string) (string, bool) {
		r, ok := bytes.CutPrefix(rest, []byte(key))
		if !ok {
			return "", false
		}
		i := bytes.IndexByte(r, '"')
		if i < 0 || bytes.IndexByte(r[:i], '\\') >= 0 {
			return "", false
		}
		rest = r[i+1:]
		return string(r[:i]), true
	}
	rest = rest[n:]
	t, ok := str(`,"type":"`)
	if !ok {
		return ev, false
	}
	ev.Type = adapters.EventType(t)
	var f [len(plainKeys)]string
	for i, key := range plainKeys {
		if bytes.HasPrefix(rest, []byte(key)) {
			if f[i], ok = str(key); !ok {
				return ev, false
			}
			if i == 7 {
				final := f[i]
				ev.Final = &final
			}
		}
	}
	if string(rest) != "}" {
		return ev, false // another field, an escape, or not this form
	}
	ev.ResponseID, ev.Model, ev.ItemID, ev.Kind, ev.CallID, ev.Name, ev.Delta = f[0], f[1], f[2], f[3], f[4], f[5], f[6]
	ev.Signature, ev.Status, ev.StopReason, ev.ProviderStopReason = f[8], adapters.Status(f[9]), adapters.StopReason(f[10]), f[11]
	ev.RawType, ev.Detail = f[12], f[13]
	return ev, true
}

// Decision decodes a decision entry (Type EntryDecision).
func (e Entry) Decision() (Decision, bool) {
	d, ok := e.sessionEntry().(decisionEvent)
	return d.decision(), ok
}

// decision turns the entry back into the Decision it records.
func (d decisionEvent) decision() Decision {
	out := Decision{Turn: d.Turn, CallID: d.CallID, Name: d.Name, Decision: d.Decision, Arguments: d.Arguments, Reason: d.Reason, At: d.At}
	if len(d.OriginalArguments) > 0 {
		out.Arguments, out.Edited = d.OriginalArguments, d.Arguments
	}
	return out
}

// ToolResult decodes a tool result entry (Type EntryToolResult).
func (e Entry) ToolResult() (ToolResult, bool) {
	r, ok := e.sessionEntry().(resultEvent)
	return ToolResult{Turn: r.Turn, CallID: r.CallID, Name: r.Name, Content: r.Content, IsError: r.IsError, At: r.At}, ok
}

// Validation decodes a validation entry (Type EntryValidation): the turn
// it judged (0 for the session) and the layers' verdicts.
func (e Entry) Validation() (turn int, results []Validation, ok bool) {
	v, ok := e.sessionEntry().(validationEvent)
	return v.Turn, v.Results, ok
}

func (e Entry) sessionEntry() any {
	if e.Attempt != 0 || e.Event == nil {
		return nil
	}
	v, _ := parseSessionEntry(e.Event)
	return v
}

// storedStep is a step as kept in a chunk.
type storedStep struct {
	Seq      int                `json:"seq"`
	Turn     int                `json:"turn"`
	Attempt  int                `json:"attempt"`
	OffsetUS int64              `json:"offset_us"`
	RawIndex *int               `json:"raw_index,omitempty"`
	Raw      *adapters.RawEvent `json:"raw,omitempty"`
	Events   []json.RawMessage  `json:"events"`

	// decoded holds the events instead of Events when the iterator was
	// asked for canonical events (replay).
	decoded []adapters.Event
}

func (s *storedStep) entries() int { return max(1, len(s.Events), len(s.decoded)) }

// canonicalStep decodes a stored step's events in one pass, for replay.
type canonicalStep struct {
	Seq    int              `json:"seq"`
	Events []adapters.Event `json:"events"`
}

// entry returns the step's i-th entry (with its own copy of the raw event).
func (s *storedStep) entry(i int) Entry {
	e := Entry{Seq: s.Seq + i, Turn: s.Turn, Attempt: s.Attempt, Offset: time.Duration(s.OffsetUS) * time.Microsecond, RawIndex: -1}
	if s.Raw != nil {
		raw := *s.Raw
		e.Raw = &raw
	}
	if s.RawIndex != nil {
		e.RawIndex = *s.RawIndex
	}
	if i < len(s.Events) {
		e.Event = s.Events[i]
		e.Type = eventType(e.Event)
	}
	return e
}

// eventType finds the "type" of a stored event without decoding it: the
// first "type" key (string values inside are escaped, so the unescaped
// key cannot occur in them).
func eventType(raw json.RawMessage) string {
	i := bytes.Index(raw, []byte(`"type":"`))
	if i < 0 {
		return ""
	}
	rest := raw[i+8:]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}

// splitArray returns the top-level elements of a JSON array that this
// package wrote (so it is trusted to be valid), without decoding them.
func splitArray(b []byte) [][]byte {
	var out [][]byte
	depth, start, inString := 0, -1, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth == 2 {
				start = i
			}
		case '}', ']':
			if depth == 2 && start >= 0 {
				out = append(out, b[start:i+1])
				start = -1
			}
			depth--
		}
	}
	return out
}

// elemSeq reads the seq of a stored step from its prefix {"seq":N.
func elemSeq(e []byte) int {
	const prefix = `{"seq":`
	if !bytes.HasPrefix(e, []byte(prefix)) {
		return -1
	}
	n := 0
	for _, c := range e[len(prefix):] {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// stepIter walks a session's steps in seq order, from the chunk holding
// entry from, decoding only the steps at or after from. aid, when not 0,
// restricts it to one attempt's chunks; withRaw attaches the raw events.
type stepIter struct {
	rows      *sql.Rows
	from      int
	withRaw   bool
	canonical bool // decode events into storedStep.decoded
	elems     [][]byte
	raws      []adapters.RawEvent
	// stepsBuf and rawsBuf hold the decompressed chunk.
	stepsBuf, rawsBuf []byte
	first             int // raw_index of raws[0]
	i                 int
	cur               storedStep
	err               error
}

func (db *DB) iterSteps(ctx context.Context, sid int64, from int, aid int64, withRaw bool) (*stepIter, error) {
	from = max(from, 1)
	var start int
	err := db.sql.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM chunks WHERE sid = ? AND seq <= ?`, sid, from).Scan(&start)
	if err != nil {
		return nil, err
	}
	cols := `steps, coalesce(first_raw, -1), NULL`
	if withRaw {
		cols = `steps, coalesce(first_raw, -1), raws`
	}
	cols += `, ` + db.chunkCodec()
	var rows *sql.Rows
	if aid != 0 {
		rows, err = db.sql.QueryContext(ctx, `SELECT `+cols+` FROM chunks WHERE aid = ? AND seq >= ? ORDER BY seq`, aid, start)
	} else {
		rows, err = db.sql.QueryContext(ctx, `SELECT `+cols+` FROM chunks WHERE sid = ? AND seq >= ? ORDER BY seq`, sid, start)
	}
	if err != nil {
		return nil, err
	}
	it := &stepIter{rows: rows, from: from, withRaw: withRaw}
	if b, ok := chunkBufs.Get().(*[2][]byte); ok {
		it.stepsBuf, it.rawsBuf = b[0], b[1]
	}
	return it, nil
}

// sessionSteps walks all the steps of the session id, raw events included.
func (db *DB) sessionSteps(id string) (*stepIter, error) {
	ctx := context.Background()
	sid, err := db.sid(ctx, id)
	if err != nil {
		return nil, err
	}
	return db.iterSteps(ctx, sid, 1, 0, true)
}

// decodeStep reads a step in the form writeStep writes, without the JSON
// decoder, which was most of what folding a replay's entries cost; false
// for any other form (the export's, with its raw event inline), for
// json.Unmarshal. Its events are one copy of the step's bytes, split, as
// the decoder would copy them, so no entry keeps a whole chunk alive.
func decodeStep(b []byte, s *storedStep) bool {
	var v [5]int64
	rest := b
	for i, key := range []string{`{"seq":`, `,"turn":`, `,"attempt":`, `,"offset_us":`, `,"raw_index":`} {
		r, ok := bytes.CutPrefix(rest, []byte(key))
		if !ok {
			if i == 4 {
				v[i] = -1 // no raw event
				break
			}
			return false
		}
		neg := len(r) > 0 && r[0] == '-'
		n := 0
		if neg {
			n = 1
		}
		start := n
		for ; n < len(r) && r[n] >= '0' && r[n] <= '9' && n-start < 18; n++ {
			v[i] = v[i]*10 + int64(r[n]-'0')
		}
		if n == start {
			return false
		}
		if neg {
			v[i] = -v[i]
		}
		rest = r[n:]
	}
	arr, ok := bytes.CutPrefix(rest, []byte(`,"events":`))
	if !ok || len(arr) < 3 || arr[0] != '[' || !bytes.HasSuffix(arr, []byte("]}")) {
		return false
	}
	*s = storedStep{Seq: int(v[0]), Turn: int(v[1]), Attempt: int(v[2]), OffsetUS: v[3]}
	if v[4] >= 0 {
		ri := int(v[4])
		s.RawIndex = &ri
	}
	if parts := splitArray(slices.Clone(arr[:len(arr)-1])); len(parts) > 0 {
		s.Events = make([]json.RawMessage, len(parts))
		for i, p := range parts {
			s.Events[i] = p
		}
	}
	return true
}

// next returns the next step, or nil at the end or on error (see err). The
// step is valid until the following call.
func (it *stepIter) next() *storedStep {
	for {
		for it.i < len(it.elems) {
			e := it.elems[it.i]
			it.i++
			if seq := elemSeq(e); seq >= 0 && seq < it.from {
				// Skip whole steps before from; a step that spans from
				// is kept (its entries are filtered by the caller).
				if it.i < len(it.elems) && elemSeq(it.elems[it.i]) <= it.from {
					continue
				}
			}
			it.cur = storedStep{}
			if it.canonical {
				var cs canonicalStep
				if it.err = json.Unmarshal(e, &cs); it.err != nil {
					return nil
				}
				it.cur.Seq, it.cur.decoded = cs.Seq, cs.Events
				return &it.cur
			}
			if !decodeStep(e, &it.cur) {
				if it.err = json.Unmarshal(e, &it.cur); it.err != nil {
					return nil
				}
			}
			if it.withRaw && it.cur.RawIndex != nil {
				k := *it.cur.RawIndex - it.first
				if k < 0 || k >= len(it.raws) {
					it.err = fmt.Errorf("store: entry %d: its raw event is missing", it.cur.Seq)
					return nil
				}
				it.cur.Raw = &it.raws[k]
			}
			return &it.cur
		}
		if it.err != nil || !it.rows.Next() {
			if it.err == nil {
				it.err = it.rows.Err()
			}
			return nil
		}
		var steps, raws []byte
		var codec int
		if it.err = it.rows.Scan(&steps, &it.first, &raws, &codec); it.err != nil {
			return nil
		}
		// Decompressed into the iterator's buffers, reused chunk after
		// chunk: what a step or raw event keeps is copied out of them.
		if steps, it.err = decodeChunkInto(it.stepsBuf, steps, codec); it.err != nil {
			return nil
		}
		if raws, it.err = decodeChunkInto(it.rawsBuf, raws, codec); it.err != nil {
			return nil
		}
		if codec != codecPlain {
			it.stepsBuf = steps
			if raws != nil {
				it.rawsBuf = raws
			}
		}
		it.elems, it.i = splitArray(steps), 0
		if it.withRaw && raws != nil {
			if it.raws, it.err = readRaws(raws); it.err != nil {
				return nil
			}
		}
	}
}

func (it *stepIter) close() error {
	it.rows.Close()
	if it.stepsBuf != nil || it.rawsBuf != nil {
		chunkBufs.Put(&[2][]byte{it.stepsBuf, it.rawsBuf})
		it.stepsBuf, it.rawsBuf, it.elems = nil, nil, nil
	}
	return it.err
}

// chunkBufs are the buffers iterators decompress chunks into (*[2][]byte:
// steps, raws), passed from one to the next: a jump reads a chunk or two
// with each of several iterators, and a new buffer each time was a
// sixth of what it allocated.
var chunkBufs sync.Pool

// Events returns up to limit timeline entries of a session starting at
// entry from (1-based), reading only the chunks that hold them.
func (db *DB) Events(id string, from, limit int) ([]Entry, error) {
	ctx := context.Background()
	sid, err := db.sid(ctx, id)
	if err != nil {
		return nil, err
	}
	from = max(from, 1)
	it, err := db.iterSteps(ctx, sid, from, 0, true)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for s := it.next(); s != nil && (limit <= 0 || len(out) < limit); s = it.next() {
		for i := 0; i < s.entries() && (limit <= 0 || len(out) < limit); i++ {
			if s.Seq+i >= from {
				out = append(out, s.entry(i))
			}
		}
	}
	return out, it.close()
}

// EachEntry calls fn for every entry of a session from entry from to entry
// to (0: the end), reading a chunk at a time. fn returning an error stops
// it.
func (db *DB) EachEntry(id string, from, to int, fn func(Entry) error) error {
	ctx := context.Background()
	sid, err := db.sid(ctx, id)
	if err != nil {
		return err
	}
	from = max(from, 1)
	it, err := db.iterSteps(ctx, sid, from, 0, true)
	if err != nil {
		return err
	}
	defer it.close()
	for s := it.next(); s != nil; s = it.next() {
		for i := 0; i < s.entries(); i++ {
			seq := s.Seq + i
			if to > 0 && seq > to {
				return it.close()
			}
			if seq < from {
				continue
			}
			if err := fn(s.entry(i)); err != nil {
				return err
			}
		}
	}
	return it.close()
}
