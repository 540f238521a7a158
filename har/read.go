// Package har is the HAR 1.2 file format: Import records the LLM API
// exchanges of a capture as sessions, through the session journal, and
// Export writes a stored session as a HAR that devtools open and that
// imports back with the same timeline.
package har

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/redact"
	"github.com/modelwire/modelwire/store"
)

// HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/), the subset
// browsers' devtools and mitmproxy write and read.

type harFile struct {
	Log harLog `json:"log"`
}

type harLog struct {
	Version string     `json:"version"`
	Creator harCreator `json:"creator"`
	Pages   []struct{} `json:"pages"`
	Entries []harEntry `json:"entries"`
}

type harCreator struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type harEntry struct {
	StartedDateTime string      `json:"startedDateTime"`
	Time            float64     `json:"time"`
	Request         harRequest  `json:"request"`
	Response        harResponse `json:"response"`
	Cache           struct{}    `json:"cache"`
	Timings         harTimings  `json:"timings"`
	ResourceType    string      `json:"_resourceType,omitempty"`
	Modelwire       *harExt     `json:"_modelwire,omitempty"`
}

type harExt struct {
	Session  string `json:"session"`
	Turn     int    `json:"turn"`
	Attempt  int    `json:"attempt"`
	Protocol string `json:"protocol"`
	// Status is the session's; Entries are the session-level entries
	// (decisions, tool results, verdicts) recorded after this attempt and
	// before the next, which HTTP alone does not carry: with them a
	// session exported as HAR imports back with the same timeline.
	Status  store.Status      `json:"status,omitempty"`
	Entries []harSessionEntry `json:"entries,omitempty"`
	// Scenario and Variant name the session's scenario, so an imported
	// run can be forked (its scenario runs its tools).
	Scenario string `json:"scenario,omitempty"`
	Variant  string `json:"variant,omitempty"`
	// Provider is who answered (the simulator's loopback URL would
	// otherwise read as an OpenAI-compatible server).
	Provider string `json:"provider,omitempty"`
	// Times are the attempt's time points HAR's timings have no field
	// for, so that an export imports back with all of them.
	Times *harTimes `json:"times,omitempty"`
}

// harTimes are milliseconds from the request's start (the server's
// figure: its own time on the request); a point not recorded is absent.
type harTimes struct {
	FirstEvent   *float64 `json:"first_event_ms,omitempty"`
	FirstToken   *float64 `json:"first_token_ms,omitempty"`
	FirstText    *float64 `json:"first_text_ms,omitempty"`
	Terminal     *float64 `json:"terminal_ms,omitempty"`
	Server       *float64 `json:"server_ms,omitempty"`
	ServerSource string   `json:"server_source,omitempty"`
}

// maxPointMS bounds a time point read from a file (a day): a larger one
// is not a measurement, and would overflow a Duration.
const maxPointMS = 24 * 60 * 60 * 1000

// duration is a time point read from a file; 0 (not recorded) when it is
// absent, negative or past maxPointMS.
func duration(ms *float64) time.Duration {
	if ms == nil || *ms <= 0 || *ms > maxPointMS {
		return 0
	}
	return time.Duration(*ms * float64(time.Millisecond))
}

// harSessionEntry is a session-level entry as stored, with its offset
// from the session's start.
type harSessionEntry struct {
	OffsetUS int64           `json:"offset_us"`
	Entry    json.RawMessage `json:"entry"`
}

type harNV struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type harRequest struct {
	Method      string       `json:"method"`
	URL         string       `json:"url"`
	HTTPVersion string       `json:"httpVersion"`
	Cookies     []harNV      `json:"cookies"`
	Headers     []harNV      `json:"headers"`
	QueryString []harNV      `json:"queryString"`
	PostData    *harPostData `json:"postData,omitempty"`
	HeadersSize int64        `json:"headersSize"`
	BodySize    int64        `json:"bodySize"`
}

type harPostData struct {
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
}

type harResponse struct {
	Status      int        `json:"status"`
	StatusText  string     `json:"statusText"`
	HTTPVersion string     `json:"httpVersion"`
	Cookies     []harNV    `json:"cookies"`
	Headers     []harNV    `json:"headers"`
	Content     harContent `json:"content"`
	RedirectURL string     `json:"redirectURL"`
	HeadersSize int64      `json:"headersSize"`
	BodySize    int64      `json:"bodySize"`
}

type harContent struct {
	Size     int64  `json:"size"`
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
	Encoding string `json:"encoding,omitempty"`
}

// harTimings are milliseconds; -1 means not applicable.
type harTimings struct {
	Blocked float64 `json:"blocked"`
	DNS     float64 `json:"dns"`
	Connect float64 `json:"connect"`
	SSL     float64 `json:"ssl"`
	Send    float64 `json:"send"`
	Wait    float64 `json:"wait"`
	Receive float64 `json:"receive"`
}

// harPlan is one HAR entry to import: an attempt of a turn of a
// conversation.
type harPlan struct {
	index    int
	entry    harEntry
	protocol string
	provider string
	model    string
	baseURL  string
	body     []byte
	started  time.Time

	// What links it to the entries before it (see linkHAR).
	history    []string // the request's conversation items, canonical
	key        string   // the whole request body, canonical
	previousID string   // Responses' previous_response_id

	turn, attempt int
	retry         string // why this attempt repeats the one before
}

// conversation is one conversation of a HAR file, to be recorded as
// one session: its exchanges in the order they started, numbered by turn
// and attempt (see linkHAR).
type conversation struct {
	Meta store.SessionMeta
	// Status is the session's status as a modelwire export says it ("" for
	// a foreign HAR): its verdicts decided it, not HTTP alone.
	Status    store.Status
	Exchanges []exchange
}

// exchange is one HAR entry as an attempt: the request as sent, the
// response as received, and where it sits in time. HAR keeps no time per
// event; Sent, FirstByte and End are from the attempt's start.
type exchange struct {
	Entry         int // its index in log.entries
	Turn, Attempt int
	Request       store.AttemptMeta
	Started       time.Time
	Offset        time.Duration // from the session's start
	Sent          time.Duration
	FirstByte     time.Duration
	End           time.Duration
	Status        int
	Header        http.Header
	MimeType      string // the response's media type, without parameters
	Body          []byte // the response body, decoded from base64 when it was
	entries       []harSessionEntry
	times         *harTimes // a modelwire export's time points
}

// read reads a HAR file into its conversations: each conversation
// among the entries whose request is one of the protocols (by its URL
// path) is one session, each entry an attempt of one of its turns (see
// linkHAR for how entries are linked). Other entries are skipped and
// counted in the result. The whole file is checked here, before anything
// is written: a malformed file is reported with the entry at fault.
// Turning the exchanges into stored events is Import's, through the
// session journal.
func read(r io.Reader, name string) ([]conversation, store.ImportResult, error) {
	var res store.ImportResult
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, res, &store.InputError{File: name, Entry: -1, Msg: err.Error()}
	}
	if !utf8.Valid(data) {
		// JSON is UTF-8 (RFC 8259); encoding/json would quietly turn bad
		// bytes into U+FFFD and import a body that was never sent.
		return nil, res, &store.InputError{File: name, Entry: -1, Msg: fmt.Sprintf("not valid UTF-8 (at byte %d)", invalidUTF8At(data))}
	}
	var top struct {
		Log *struct {
			Entries []json.RawMessage `json:"entries"`
		} `json:"log"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, res, jsonInputError(name, data, err)
	}
	if top.Log == nil || top.Log.Entries == nil {
		return nil, res, &store.InputError{File: name, Entry: -1, Msg: "not a HAR file: it has no log.entries"}
	}
	var plans []harPlan
	for i, raw := range top.Log.Entries {
		bad := func(format string, args ...any) error {
			return &store.InputError{File: name, Entry: i, Msg: fmt.Sprintf(format, args...)}
		}
		var e harEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, res, bad("%v", err)
		}
		if e.Request.URL == "" || e.Request.Method == "" {
			return nil, res, bad("request.method and request.url are required")
		}
		u, err := url.Parse(e.Request.URL)
		if err != nil || u.Host == "" {
			return nil, res, bad("request.url %q is not an absolute URL", store.Redact(e.Request.URL))
		}
		res.Entries++
		d, ok := protocolOf(u)
		if !ok || !strings.EqualFold(e.Request.Method, http.MethodPost) {
			res.Skipped++
			continue
		}
		started, err := time.Parse(time.RFC3339Nano, e.StartedDateTime)
		if err != nil {
			return nil, res, bad("startedDateTime %q is not a date", e.StartedDateTime)
		}
		if e.Response.Status == 0 && e.Response.Content.Text == "" {
			return nil, res, bad("the response is missing (status 0, no content): the request may not have completed")
		}
		body := []byte(e.Response.Content.Text)
		if strings.EqualFold(e.Response.Content.Encoding, "base64") {
			if body, err = base64.StdEncoding.DecodeString(e.Response.Content.Text); err != nil {
				return nil, res, bad("response.content.text is not valid base64: %v", err)
			}
		} else if e.Response.Content.Encoding != "" {
			return nil, res, bad("response.content.encoding %q is not supported (only base64)", e.Response.Content.Encoding)
		}
		// A recorder that kept the bytes as they came off the wire keeps
		// them compressed (Content-Encoding: gzip): the body is what they
		// decompress to.
		if body, err = gunzipHAR(body); err != nil {
			return nil, res, bad("response.content: %v", err)
		}
		p := harPlan{index: i, entry: e, protocol: d.Name, provider: providerOfHost(u.Hostname()), body: body, started: started,
			baseURL: u.Scheme + "://" + u.Host + d.BaseURLOf(strings.TrimRight(u.Path, "/"))}
		var root gjson.Result
		if e.Request.PostData != nil {
			root = gjson.Parse(e.Request.PostData.Text)
			p.history, p.key = adapters.HistoryItems(d.Name, root), adapters.Canonical(e.Request.PostData.Text)
		}
		decl := d.Declared(u.Path, root)
		p.model, p.previousID = decl.Model, decl.PreviousID
		plans = append(plans, p)
	}
	var convs []conversation
	for _, plans := range linkHAR(plans) {
		if err := checkHARNumbers(plans, name); err != nil {
			return nil, res, err
		}
		convs = append(convs, harConversation(plans))
	}
	return convs, res, nil
}

// linkHAR groups entries into conversations, in the order they started,
// and numbers their turns and attempts. An entry modelwire exported says
// where it belongs (_modelwire: session, turn, attempt). Any other joins,
// as the recording proxy links requests:
//
//  1. the conversation whose last request was the same (canonical body)
//     and failed (an HTTP error): the next attempt of that turn;
//  2. the conversation whose last response carries the entry's
//     previous_response_id: its next turn;
//  3. the most recent conversation of its protocol whose last request's
//     items the entry's items extend: its next turn;
//  4. otherwise a new conversation.
func linkHAR(plans []harPlan) [][]harPlan {
	sort.SliceStable(plans, func(i, j int) bool { return plans[i].started.Before(plans[j].started) })
	type conv struct {
		plans []harPlan
		turn  int
	}
	var convs []*conv
	exported := map[string]*conv{}
	find := func(p harPlan) (c *conv, turn, attempt int, retry string) {
		for i := len(convs) - 1; i >= 0; i-- {
			k := convs[i]
			last := k.plans[len(k.plans)-1]
			if last.protocol == p.protocol && last.key != "" && last.key == p.key && last.entry.Response.Status >= 400 {
				return k, last.turn, last.attempt + 1, fmt.Sprintf("HTTP %d", last.entry.Response.Status)
			}
		}
		if p.previousID != "" {
			for i := len(convs) - 1; i >= 0; i-- {
				if k := convs[i]; bytes.Contains(k.plans[len(k.plans)-1].body, []byte(`"`+p.previousID+`"`)) {
					return k, k.turn + 1, 1, ""
				}
			}
		}
		for i := len(convs) - 1; i >= 0; i-- {
			k := convs[i]
			last := k.plans[len(k.plans)-1]
			if last.protocol == p.protocol && len(last.history) > 0 && len(last.history) < len(p.history) &&
				slices.Equal(last.history, p.history[:len(last.history)]) {
				return k, k.turn + 1, 1, ""
			}
		}
		return nil, 1, 1, ""
	}
	for _, p := range plans {
		var c *conv
		if x := p.entry.Modelwire; x != nil && x.Session != "" && x.Turn > 0 && x.Attempt > 0 {
			c, p.turn, p.attempt = exported[x.Session], x.Turn, x.Attempt
			if c == nil {
				c = &conv{}
				exported[x.Session] = c
				convs = append(convs, c)
			}
		} else if c, p.turn, p.attempt, p.retry = find(p); c == nil {
			c = &conv{}
			convs = append(convs, c)
		}
		c.plans = append(c.plans, p)
		c.turn = max(c.turn, p.turn)
	}
	out := make([][]harPlan, len(convs))
	for i, c := range convs {
		out[i] = c.plans
	}
	return out
}

// jsonInputError reports a JSON error with its line and column.
func jsonInputError(name string, data []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 {
		return &store.InputError{File: name, Entry: -1, Msg: "not valid JSON: " + err.Error()}
	}
	off = min(off, int64(len(data)))
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - int64(bytes.LastIndexByte(data[:off], '\n'))
	return &store.InputError{File: name, Line: line, Entry: -1, Msg: fmt.Sprintf("not valid JSON (column %d): %v", col, err)}
}

// harConversation describes the linked entries of one conversation.
func harConversation(plans []harPlan) conversation {
	first := plans[0]
	u, _ := url.Parse(first.entry.Request.URL)
	c := conversation{Meta: store.SessionMeta{Copy: true, Title: first.entry.Request.Method + " " + u.Host + u.Path, Protocol: first.protocol,
		Provider: first.provider, Model: first.model, BaseURL: first.baseURL, Source: "har", CreatedAt: first.started,
		Manifest: store.Manifest{AdapterVersion: adapters.Version}}}
	for _, h := range first.entry.Request.Headers {
		if strings.EqualFold(h.Name, "User-Agent") {
			c.Meta.Manifest.Client = h.Value // the client the file recorded (its SDK)
		}
	}
	if x := first.entry.Modelwire; x != nil {
		c.Meta.Scenario, c.Meta.Variant = x.Scenario, x.Variant
		if x.Provider != "" {
			c.Meta.Provider = x.Provider
		}
		if x.Status == store.StatusDone || x.Status == store.StatusFailed {
			c.Status = x.Status
		}
	}
	for _, p := range plans {
		c.Exchanges = append(c.Exchanges, harExchange(p, p.started.Sub(first.started)))
	}
	return c
}

// harExchange describes one entry as an attempt that started offset into
// its session.
func harExchange(p harPlan, offset time.Duration) exchange {
	e := p.entry
	reqH, respH := http.Header{}, http.Header{}
	for _, h := range e.Request.Headers {
		reqH.Add(h.Name, h.Value)
	}
	for _, h := range e.Response.Headers {
		respH.Add(h.Name, h.Value)
	}
	var reqBody []byte
	stream := strings.Contains(e.Request.URL, ":streamGenerateContent")
	if e.Request.PostData != nil {
		reqBody = []byte(e.Request.PostData.Text)
		var req struct {
			Stream bool `json:"stream"`
		}
		if json.Unmarshal(reqBody, &req) == nil && req.Stream {
			stream = true
		}
	}
	t := e.Timings
	pos := func(v float64) float64 { return max(v, 0) }
	sent := time.Duration((pos(t.Blocked) + pos(t.DNS) + pos(t.Connect) + pos(t.Send)) * float64(time.Millisecond))
	firstByte := sent + time.Duration(pos(t.Wait)*float64(time.Millisecond))
	end := firstByte + time.Duration(pos(t.Receive)*float64(time.Millisecond))
	mt, _, _ := mime.ParseMediaType(e.Response.Content.MimeType)
	// A browser's HAR holds the keys as sent, and a provider may have
	// echoed them: the request's secrets are sealed out of the bodies and
	// the response's headers too (the URL and the request's headers are
	// redacted by name when stored).
	u, _ := url.Parse(e.Request.URL)
	known := redact.Collect(reqH, u)
	reqBody = redact.JSONMembers(known.Bytes(reqBody))
	x := exchange{Entry: p.index, Turn: p.turn, Attempt: p.attempt, Started: p.started, Offset: offset,
		Request: store.AttemptMeta{Protocol: p.protocol, Method: e.Request.Method, URL: e.Request.URL, Header: reqH, Body: reqBody,
			Stream: stream, RetryReason: p.retry},
		Sent: sent, FirstByte: firstByte, End: end, Status: e.Response.Status, Header: known.Header(respH), MimeType: mt,
		Body: known.Bytes(p.body)}
	if e.Modelwire != nil {
		x.entries, x.times = e.Modelwire.Entries, e.Modelwire.Times
	}
	return x
}

// invalidUTF8At is the offset of the first byte that is not valid UTF-8.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// maxHARBody bounds a response body a HAR entry decompresses to.
const maxHARBody = 64 << 20

// gunzipHAR decompresses a gzip body (by its magic bytes), at most
// maxHARBody; any other body is returned as it is.
func gunzipHAR(body []byte) ([]byte, error) {
	if len(body) < 2 || body[0] != 0x1f || body[1] != 0x8b {
		return body, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("a gzip body that does not open: %v", err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxHARBody+1))
	if err != nil {
		return nil, fmt.Errorf("a gzip body that does not decompress: %v", err)
	}
	if len(out) > maxHARBody {
		return nil, fmt.Errorf("a gzip body that decompresses to more than %d MiB", maxHARBody>>20)
	}
	return out, nil
}

// checkHARNumbers holds a conversation's turn and attempt numbers (a
// modelwire export's _modelwire.turn and .attempt, and the turns of its
// session-level entries) to what the file holds for it: every turn has
// an entry, so none can exceed the conversation's entries. A crafted turn
// of 2·10⁹ would otherwise be stored, and every reader that sizes its
// tables by the turns would try to allocate them.
func checkHARNumbers(plans []harPlan, name string) error {
	n := len(plans)
	for _, p := range plans {
		if p.turn > n || p.attempt > n || p.turn < 1 || p.attempt < 1 {
			return &store.InputError{File: name, Entry: p.index, Msg: fmt.Sprintf(
				"_modelwire turn %d, attempt %d: the session has %d entries in this file, so neither can exceed %d", p.turn, p.attempt, n, n)}
		}
		if x := p.entry.Modelwire; x != nil {
			for _, se := range x.Entries {
				if t := gjson.GetBytes(se.Entry, "turn").Int(); t < 0 || t > int64(n) {
					return &store.InputError{File: name, Entry: p.index, Msg: fmt.Sprintf(
						"_modelwire.entries names turn %d; the session has %d entries in this file", t, n)}
				}
			}
		}
	}
	return nil
}
