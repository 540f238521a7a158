package vcr

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelwire/modelwire/adapters"
)

// A cassette is one modelwire session in the JSONL export format (package
// jsonl writes and imports it; see docs/vcr.md): a header line, a session
// line, an attempt line per recorded exchange, and the exchanges' raw
// events as step lines with the canonical events decoded from them. The
// lines are written here rather than by package jsonl so that a test
// importing vcr does not link the SQLite store; the import step of
// TestSDKsInEveryMode (jsonl.Import, which refuses unknown fields) keeps
// the two in step.

const (
	exportMagic  = "modelwire.export"
	exportFormat = 1
	// readFormat is the newest format read: format 2 (jsonl.ExportFormat)
	// only adds timings a cassette does not need, so `modelwire export`'s
	// files play too.
	readFormat = 2
	// exportSchema is the store schema the lines are written as
	// (store.SchemaVersion when they were last checked).
	exportSchema = 4
	// maxLine bounds one line of a cassette (a body or an event).
	maxLine = 64 << 20
)

type headerLine struct {
	Type   string `json:"type"`
	Format int    `json:"format"`
	Schema int    `json:"schema"`
}

type sessionLine struct {
	Type          string          `json:"type"`
	ID            string          `json:"id"`
	CreatedAt     time.Time       `json:"created_at"`
	FinishedAt    *time.Time      `json:"finished_at,omitempty"`
	Status        string          `json:"status"`
	Title         string          `json:"title"`
	Scenario      string          `json:"scenario"`
	Variant       string          `json:"variant,omitempty"`
	Protocol      string          `json:"protocol"`
	Provider      string          `json:"provider"`
	Model         string          `json:"model"`
	ModelReported string          `json:"model_reported,omitempty"`
	BaseURL       string          `json:"base_url,omitempty"`
	Source        string          `json:"source,omitempty"`
	Version       string          `json:"modelwire_version,omitempty"`
	ParentID      string          `json:"parent_id,omitempty"`
	Manifest      json.RawMessage `json:"manifest,omitempty"`
}

type attemptLine struct {
	Type              string           `json:"type"`
	Turn              int              `json:"turn"`
	Attempt           int              `json:"attempt"`
	Protocol          string           `json:"protocol"`
	StartedAt         time.Time        `json:"started_at"`
	StartUS           int64            `json:"start_us"`
	Method            string           `json:"method"`
	URL               string           `json:"url"`
	RequestHeaders    http.Header      `json:"request_headers"`
	RequestBody       *string          `json:"request_body,omitempty"`
	RequestBodyBase64 []byte           `json:"request_body_base64,omitempty"`
	Stream            bool             `json:"stream"`
	RetryReason       string           `json:"retry_reason,omitempty"`
	StatusCode        int              `json:"status_code"`
	ResponseHeaders   http.Header      `json:"response_headers"`
	Error             string           `json:"error,omitempty"`
	State             string           `json:"state"`
	TimingsUS         map[string]int64 `json:"timings_us,omitempty"`
}

type stepLine struct {
	Type     string             `json:"type"`
	Seq      int                `json:"seq"`
	Turn     int                `json:"turn"`
	Attempt  int                `json:"attempt"`
	OffsetUS int64              `json:"offset_us"`
	RawIndex *int               `json:"raw_index,omitempty"`
	Raw      *adapters.RawEvent `json:"raw,omitempty"`
	Events   []json.RawMessage  `json:"events"`
}

// Cassette is a recorded session: its exchanges, grouped by turn, in the
// order they were recorded. It is safe for one goroutine; Recorder and
// Server lock around it.
type Cassette struct {
	session sessionLine
	turns   []*turn
	// sessionSteps are the session-level entries of an exported session
	// (validations, decisions): kept as read, written back only while the
	// turns are as read.
	sessionSteps []stepLine
	changed      bool
	name         string // the test's, or the file's
}

// Name is the cassette's name: its test's, else its file's, else its
// session's id.
func (c *Cassette) Name() string {
	if c.name != "" {
		return c.name
	}
	return c.session.ID
}

// turn is one request and the attempts that answered it (a retried turn
// answers 429 first, as it did).
type turn struct {
	attempts []*exchange
	served   int // how many times it was asked for in this run
	used     bool
	key      *canonical // the request's matching form, computed once
}

// exchange is one attempt: its line and its steps as stored.
type exchange struct {
	line  attemptLine
	steps []stepLine
}

func (x *exchange) body() []byte {
	if x.line.RequestBody != nil {
		return []byte(*x.line.RequestBody)
	}
	return x.line.RequestBodyBase64
}

// path is the URL path the exchange was sent to.
func (x *exchange) path() string {
	u, err := url.Parse(x.line.URL)
	if err != nil {
		return x.line.URL
	}
	return u.Path
}

// newCassette is an empty cassette named after its test.
func newCassette(name string) *Cassette {
	return &Cassette{name: name, session: sessionLine{Type: "session", ID: sessionID(name), CreatedAt: time.Now().UTC().Truncate(time.Millisecond),
		Status: "done", Title: name, Scenario: "vcr", Provider: "recorded", Source: "vcr"}}
}

// sessionID is a stable id for a cassette: importing the same cassette
// twice finds the session already there instead of a copy.
func sessionID(name string) string {
	var h uint64 = 14695981039346656037
	for i := 0; i < len(name); i++ {
		h = (h ^ uint64(name[i])) * 1099511628211
	}
	return fmt.Sprintf("vcr%013x", h>>12)
}

// Len is how many exchanges the cassette holds.
func (c *Cassette) Len() int {
	n := 0
	for _, t := range c.turns {
		n += len(t.attempts)
	}
	return n
}

// SessionID is the session's id, as `modelwire import` stores it.
func (c *Cassette) SessionID() string { return c.session.ID }

// Protocol is the session's protocol (its first exchange's).
func (c *Cassette) Protocol() string { return c.session.Protocol }

// ReadFile reads a cassette file.
func ReadFile(path string) (*Cassette, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("cassette %s: %w", path, err)
	}
	c.name = cassetteName(path)
	return c, nil
}

// Read reads a cassette: a JSONL export holding one session (what
// `modelwire export` writes is a cassette too). Errors name the line.
func Read(r io.Reader) (*Cassette, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	c := &Cassette{}
	byKey := map[[2]int]*exchange{}
	var turns []int // turn numbers in first-seen order
	byTurn := map[int]*turn{}
	seenSession := false
	for n := 1; ; n++ {
		b, err := readLine(br)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(b, &head); err != nil {
			return nil, fmt.Errorf("line %d: not a JSON object: %v", n, err)
		}
		if n == 1 && head.Type != exportMagic {
			return nil, fmt.Errorf("line 1: not a modelwire session (the first line must be {\"type\":%q,…})", exportMagic)
		}
		switch head.Type {
		case exportMagic:
			var h headerLine
			if err := json.Unmarshal(b, &h); err != nil || h.Format < 1 || h.Format > readFormat {
				return nil, fmt.Errorf("line %d: export format %d; this modelwire reads formats 1 to %d", n, h.Format, readFormat)
			}
		case "session":
			if seenSession {
				return nil, fmt.Errorf("line %d: a second session; a cassette holds one", n)
			}
			seenSession = true
			if err := json.Unmarshal(b, &c.session); err != nil {
				return nil, fmt.Errorf("line %d: bad session: %v", n, err)
			}
		case "attempt":
			var a attemptLine
			if err := json.Unmarshal(b, &a); err != nil {
				return nil, fmt.Errorf("line %d: bad attempt: %v", n, err)
			}
			k := [2]int{a.Turn, a.Attempt}
			if byKey[k] != nil || a.Turn < 1 || a.Attempt < 1 {
				return nil, fmt.Errorf("line %d: attempt %d.%d is numbered twice or below 1", n, a.Turn, a.Attempt)
			}
			x := &exchange{line: a}
			byKey[k] = x
			t := byTurn[a.Turn]
			if t == nil {
				t = &turn{}
				byTurn[a.Turn] = t
				turns = append(turns, a.Turn)
			}
			t.attempts = append(t.attempts, x)
		case "step":
			var s stepLine
			if err := json.Unmarshal(b, &s); err != nil {
				return nil, fmt.Errorf("line %d: bad step: %v", n, err)
			}
			if s.Attempt == 0 {
				c.sessionSteps = append(c.sessionSteps, s)
				continue
			}
			x := byKey[[2]int{s.Turn, s.Attempt}]
			if x == nil {
				return nil, fmt.Errorf("line %d: a step of attempt %d.%d, which has no attempt line", n, s.Turn, s.Attempt)
			}
			x.steps = append(x.steps, s)
		default:
			return nil, fmt.Errorf("line %d: unknown line type %q", n, head.Type)
		}
	}
	if !seenSession {
		return nil, errors.New("no session line")
	}
	for _, n := range turns {
		c.turns = append(c.turns, byTurn[n])
	}
	return c, nil
}

// readLine reads one line, at most maxLine bytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return nil, fmt.Errorf("a line longer than %d MiB", maxLine>>20)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && (err != io.EOF || len(line) == 0) {
			return nil, err
		}
		if !utf8.Valid(line) {
			return nil, errors.New("not valid UTF-8")
		}
		return bytes.TrimRight(line, "\r\n"), nil
	}
}

// WriteTo writes the cassette as JSON Lines: turns renumbered from 1 in
// order, steps numbered as the store numbers entries.
func (c *Cassette) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: bufio.NewWriterSize(w, 64<<10)}
	enc := json.NewEncoder(cw)
	enc.SetEscapeHTML(false)
	put := func(v any) {
		if cw.err == nil {
			cw.err = enc.Encode(v)
		}
	}
	put(headerLine{Type: exportMagic, Format: exportFormat, Schema: exportSchema})
	s := c.session
	s.Type = "session"
	if s.Protocol == "" && len(c.turns) > 0 {
		s.Protocol = c.turns[0].attempts[0].line.Protocol
	}
	put(s)
	renumbered := false
	for i, t := range c.turns {
		for _, x := range t.attempts {
			a := x.line
			a.Type = "attempt"
			renumbered = renumbered || a.Turn != i+1
			a.Turn = i + 1
			put(a)
		}
	}
	seq := 1
	for i, t := range c.turns {
		for _, x := range t.attempts {
			for _, st := range x.steps {
				st.Type, st.Seq, st.Turn, st.Attempt = "step", seq, i+1, x.line.Attempt
				if st.Events == nil {
					st.Events = []json.RawMessage{}
				}
				seq += max(1, len(st.Events))
				put(st)
			}
		}
	}
	if !renumbered && !c.changed {
		for _, st := range c.sessionSteps {
			st.Type, st.Seq = "step", seq
			seq += max(1, len(st.Events))
			put(st)
		}
	}
	if cw.err == nil {
		cw.err = cw.w.(*bufio.Writer).Flush()
	}
	return cw.n, cw.err
}

type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (w *countWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.n += int64(n)
	return n, err
}

// WriteFile writes the cassette to path, whole or not at all (a temporary
// file renamed over it), making its directory.
func (c *Cassette) WriteFile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = c.WriteTo(tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// cassettePath is the file a cassette name stands for: NAME.jsonl unless
// the name has an extension of its own.
func cassettePath(name string) string {
	if filepath.Ext(name) == "" {
		return name + ".jsonl"
	}
	return name
}

// cassetteName is the test-facing name of a cassette file.
func cassetteName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), ".jsonl")
}
