package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
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
	// Manifest is what the session was run with. A list reads it without
	// its tools, output schema and parameters (their hashes stay); a
	// session read whole (GetSession) has all of it.
	Manifest Manifest

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
	CacheWrite1hTokens        int64 // the hour-long part of CacheWriteTokens
	WebSearchCalls            int64
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
	// Since keeps sessions created at or after it (zero: all).
	Since time.Time
	// Limit caps the result (0: no cap).
	Limit int
}

const sessionColumns = `id, created_at, coalesce(finished_at, 0), status, title, scenario, variant, protocol, provider,
	model, model_reported, base_url, source, modelwire_version, turns, events,
	coalesce(CASE WHEN json_valid(manifest) THEN json_extract(manifest, '$.parameters.faults') END, ''),
	coalesce((SELECT layer FROM validations v WHERE v.sid = sessions.sid AND v.status = 'fail'
		AND v.seq = (SELECT max(seq) FROM validations w WHERE w.sid = sessions.sid) ORDER BY v.ord LIMIT 1), ''), `

// tokenSums are the session's token counts, the sums over its attempts
// (scanSession's five after FailedLayer; billedSums add two more).
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
	return db.sessionColsWith(tokenSums + db.billedSums())
}

// billedSums are the sums of the billing buckets 0005 added columns for.
func (db *DB) billedSums() string {
	if db.schema < 5 {
		return `0, 0, `
	}
	return `(SELECT coalesce(sum(cache_write_1h_tokens), 0) FROM attempts a WHERE a.sid = sessions.sid),
	(SELECT coalesce(sum(web_search_calls), 0) FROM attempts a WHERE a.sid = sessions.sid), `
}

// sessionColsWith is sessionCols with tokens for its token counts.
func (db *DB) sessionColsWith(tokens string) string {
	const manifest = `, CASE WHEN json_valid(manifest) THEN json_remove(manifest, '$.tools', '$.output_schema', '$.parameters') ELSE '{}' END`
	if db.schema < 3 {
		return sessionColumns + tokens + `''` + manifest
	}
	return sessionColumns + tokens + `parent_id` + manifest
}

// scanSession reads the sessionCols of a row, then extra columns.
func scanSession(sc interface{ Scan(...any) error }, extra ...any) (SessionInfo, error) {
	var s SessionInfo
	var created, finished int64
	var faults, manifest string
	err := sc.Scan(append([]any{&s.ID, &created, &finished, &s.Status, &s.Title, &s.Scenario, &s.Variant, &s.Protocol, &s.Provider,
		&s.Model, &s.ModelReported, &s.BaseURL, &s.Source, &s.Version, &s.Turns, &s.Events,
		&faults, &s.FailedLayer, &s.InputTokens, &s.OutputTokens, &s.CacheReadTokens, &s.CacheWriteTokens, &s.ReasoningTokens,
		&s.CacheWrite1hTokens, &s.WebSearchCalls, &s.ParentID, &manifest}, extra...)...)
	s.CreatedAt = time.UnixMilli(created)
	if finished != 0 {
		s.FinishedAt = time.UnixMilli(finished)
	}
	s.Faults = faultList(faults)
	_ = json.Unmarshal([]byte(manifest), &s.Manifest)
	s.Manifest.fillFromRow(&s)
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
	where, args := db.filterWhere(f, len(dead) == 0)
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

// filterWhere is f as SQL conditions on the sessions table (AND-ed) and
// their arguments. status says whether f.Status can be a condition: not
// when some running sessions were just found dead, whose row still says
// running (the caller filters those).
func (db *DB) filterWhere(f Filter, status bool) ([]string, []any) {
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
	if f.Status != "" && status {
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
	if !f.Since.IsZero() {
		where = append(where, `created_at >= ?`)
		args = append(args, f.Since.UnixMilli())
	}
	return where, args
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
