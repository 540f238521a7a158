package vcr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/redact"
)

// Mode is how a cassette is used.
type Mode int

// The modes.
const (
	// Replay answers every request from the cassette; a request it never
	// saw is a miss (the test fails, the client gets a 409).
	Replay Mode = iota
	// Record sends every request to the provider and records the
	// cassette anew.
	Record
	// Update replays what matches and re-records what changed: a miss
	// goes to the provider and its exchange replaces the recorded one it
	// came nearest to; the others are kept as they were.
	Update
	// Hybrid replays what matches; a miss goes to the provider and is
	// added to the cassette.
	Hybrid
	// Live passes every request through and records nothing.
	Live
)

var modeNames = [...]string{"replay", "record", "update", "hybrid", "live"}

func (m Mode) String() string {
	if m < 0 || int(m) >= len(modeNames) {
		return fmt.Sprintf("Mode(%d)", int(m))
	}
	return modeNames[m]
}

// ParseMode reads a mode's name.
func ParseMode(s string) (Mode, error) {
	for i, n := range modeNames {
		if strings.EqualFold(strings.TrimSpace(s), n) {
			return Mode(i), nil
		}
	}
	return 0, fmt.Errorf("mode %q: want %s", s, strings.Join(modeNames[:], ", "))
}

// DefaultMaxBody bounds one request or response body a cassette records.
const DefaultMaxBody = 64 << 20

// config is what both front ends (Recorder, Server) share.
type config struct {
	mode    Mode
	timed   bool
	ignore  [][]string
	rules   *redact.BodyRules
	maxBody int64
}

// engine plays one cassette and records into it.
type engine struct {
	cfg  config
	send func(*http.Request) (*http.Response, error) // the upstream
	save func(*Cassette) error                       // after each recorded exchange (Server); nil: at the end

	mu sync.Mutex
	c  *Cassette
}

// errTooLarge: a body past the configured bound.
var errTooLarge = errors.New("body larger than the cassette's limit")

// do answers one request: from the cassette, or from the upstream (then
// recorded). A miss in replay is returned as a Mismatch with the 409 the
// client gets.
func (e *engine) do(req *http.Request, body []byte) (*http.Response, *Mismatch, error) {
	if e.cfg.mode == Live {
		return e.forward(req, body)
	}
	known := redact.Collect(req.Header, req.URL)
	rbody := e.redactBody(known, body)
	rhdr := known.Header(req.Header)
	sent := canonicalize(req.Method, req.URL.Path, rhdr, rbody, e.cfg.ignore)

	e.mu.Lock()
	var miss *Mismatch
	if e.cfg.mode != Record {
		var t *turn
		t, miss = e.c.match(sent, e.cfg.ignore)
		if t != nil {
			x := t.attempts[min(t.served, len(t.attempts)-1)]
			t.served++
			t.used = true
			e.mu.Unlock()
			return x.response(req, e.cfg.timed), nil, nil
		}
	}
	protocol := e.c.session.Protocol
	e.mu.Unlock()
	if e.cfg.mode == Replay {
		return mismatchResponse(req, protocolOf(req, protocol), miss), miss, nil
	}

	start := time.Now()
	resp, err := e.send(upstreamRequest(req, body))
	if err != nil {
		return nil, nil, err
	}
	x, err := e.capture(req, rhdr, rbody, resp, known, start)
	if err != nil {
		return nil, nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	t := &turn{attempts: []*exchange{x}, used: true, served: 1, key: sent}
	if old := e.c.nearestTurn(miss); e.cfg.mode == Update && old != nil && !old.used {
		*old = *t // re-recorded in its place
	} else {
		e.c.turns = append(e.c.turns, t)
	}
	e.c.changed = true
	if _, ok := generation(req); ok && e.c.session.Protocol == "" {
		e.c.session.Protocol = x.line.Protocol
		e.c.session.Model = sent.model()
	}
	if e.save != nil {
		if err := e.save(e.c); err != nil {
			return nil, nil, fmt.Errorf("saving cassette %s: %w", e.c.Name(), err)
		}
	}
	return x.response(req, false), nil, nil
}

// forward passes a request through unrecorded.
func (e *engine) forward(req *http.Request, body []byte) (*http.Response, *Mismatch, error) {
	resp, err := e.send(upstreamRequest(req, body))
	return resp, nil, err
}

// redactBody is a request body as a cassette keeps it: the request's own
// key values wherever they appear, key-named members, and the patterns
// and pointers the user declared.
func (e *engine) redactBody(known *redact.Known, b []byte) []byte {
	return e.cfg.rules.JSON(redact.JSONMembers(known.Bytes(b)))
}

// upstreamRequest is the request sent on: its body again, and no
// Accept-Encoding of the client's, so that the transport undoes any
// compression and the cassette holds the text.
func upstreamRequest(req *http.Request, body []byte) *http.Request {
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	out.Header.Del("Accept-Encoding")
	out.Header.Del(CassetteHeader)
	out.RequestURI = ""
	return out
}

// protocolOf names the protocol a request speaks by its path (a model
// call, a token count, a models list), else the cassette's.
func protocolOf(req *http.Request, fallback string) string {
	if d, ok := generation(req); ok {
		return d.Name
	}
	if d, ok := registry.CountRoute(req.Method, req.URL.Path); ok {
		return d.Name
	}
	if d, _, ok := registry.ModelsRoute(req.Method, req.URL.Path, req.Header); ok {
		return d.Name
	}
	if fallback == "" {
		return registry.Default
	}
	return fallback
}

// generation is the protocol whose model call a request is, if it is one.
func generation(req *http.Request) (adapters.Descriptor, bool) {
	if d, ok := registry.Route(req.Method, req.URL.Path, req.URL.Hostname()); ok {
		return d, true
	}
	if req.Method != http.MethodPost {
		return adapters.Descriptor{}, false
	}
	return registry.RouteURL(req.URL)
}

// capture reads the upstream's response whole and records it as an
// exchange: redacted, its raw events at the times they arrived, with the
// canonical events its protocol's decoder makes of them.
func (e *engine) capture(req *http.Request, rhdr http.Header, rbody []byte, resp *http.Response, known *redact.Known, start time.Time) (*exchange, error) {
	defer resp.Body.Close()
	e.mu.Lock()
	base := e.c.endUS() + 1000
	protocol := protocolOf(req, e.c.session.Protocol)
	e.mu.Unlock()
	_, decode := generation(req) // only a model call's response decodes to events
	p, err := registry.Lookup(protocol)
	if err != nil {
		return nil, err
	}
	limited := &limitReader{r: resp.Body, n: e.cfg.maxBody}
	stream := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	type rawAt struct {
		raw adapters.RawEvent
		at  time.Duration
	}
	var raws []rawAt
	if stream {
		err = adapters.ReadStream(p, adapters.NewStream(p), limited, func(s adapters.Step) error {
			if s.Index >= 0 {
				raws = append(raws, rawAt{s.Raw, time.Since(start)})
			}
			return nil
		})
	} else {
		var b []byte
		b, err = io.ReadAll(limited)
		raws = append(raws, rawAt{adapters.RawEvent{Data: string(b)}, time.Since(start)})
	}
	if err == nil {
		err = limited.err
	}
	if err != nil {
		return nil, fmt.Errorf("reading the upstream's response: %w", err)
	}
	hdr := rhdr.Clone()
	hdr.Del(CassetteHeader)
	line := attemptLine{Type: "attempt", Attempt: 1, Protocol: protocol, StartedAt: start.UTC().Truncate(time.Millisecond),
		StartUS: base, Method: req.Method, URL: known.All(req.URL.String()), RequestHeaders: hdr,
		Stream: stream, StatusCode: resp.StatusCode, ResponseHeaders: known.Header(resp.Header), State: "done"}
	if resp.StatusCode >= 400 {
		line.State = "failed"
	}
	if utf8.Valid(rbody) {
		s := string(rbody)
		line.RequestBody = &s
	} else {
		line.RequestBodyBase64 = rbody
	}
	x := &exchange{line: line}
	dec := adapters.NewStream(p)
	for i, r := range raws {
		raw := r.raw
		raw.Data = string(e.cfg.rules.JSON([]byte(known.Text(raw.Data))))
		idx := i
		st := stepLine{OffsetUS: base + r.at.Microseconds(), RawIndex: &idx, Raw: &raw}
		var evs []adapters.Event
		switch {
		case resp.StatusCode >= 400 || !decode:
		case stream:
			evs = dec.Feed(raw)
		default:
			evs = dec.FeedBody([]byte(raw.Data))
		}
		st.Events = marshalEvents(evs)
		x.steps = append(x.steps, st)
	}
	if stream && decode && resp.StatusCode < 400 {
		if evs := dec.End(); len(evs) > 0 {
			x.steps = append(x.steps, stepLine{OffsetUS: x.steps[len(x.steps)-1].OffsetUS, Events: marshalEvents(evs)})
		}
	}
	return x, nil
}

func marshalEvents(evs []adapters.Event) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(evs))
	for i := range evs {
		if b, err := adapters.MarshalBody(evs[i]); err == nil {
			out = append(out, b)
		}
	}
	return out
}

// endUS is the offset of the cassette's last step.
func (c *Cassette) endUS() int64 {
	var end int64
	for _, t := range c.turns {
		for _, x := range t.attempts {
			end = max(end, x.line.StartUS)
			for _, s := range x.steps {
				end = max(end, s.OffsetUS)
			}
		}
	}
	return end
}

// limitReader fails past n bytes (rather than cutting quietly).
type limitReader struct {
	r   io.Reader
	n   int64
	err error
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		l.err = errTooLarge
		return 0, errTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n+1]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	if l.n < 0 {
		l.err = errTooLarge
		return n, errTooLarge
	}
	return n, err
}

// readBody reads a request body, at most max bytes.
func readBody(r io.Reader, max int64) ([]byte, error) {
	if r == nil {
		return nil, nil
	}
	b, err := io.ReadAll(&limitReader{r: r, n: max})
	if errors.Is(err, errTooLarge) {
		return nil, fmt.Errorf("request %w (%d MiB)", errTooLarge, max>>20)
	}
	return b, err
}

// upstreamURL is where a request goes: the upstream base with the
// request's path and query, or (no base) its protocol's provider.
func upstreamURL(base *url.URL, req *http.Request, path string) (*url.URL, error) {
	if base == nil {
		d, ok := registry.Route(req.Method, path, "")
		if !ok {
			d, ok = registry.RouteURL(&url.URL{Path: path})
		}
		if !ok || d.Endpoint.Host == "" {
			return nil, fmt.Errorf("no upstream for %s %s: name one with --upstream", req.Method, path)
		}
		var err error
		if base, err = url.Parse(d.Endpoint.Host); err != nil {
			return nil, err
		}
	}
	u := *base
	u.Path = strings.TrimSuffix(base.Path, "/") + path
	u.RawPath = ""
	u.RawQuery = req.URL.RawQuery
	return &u, nil
}
