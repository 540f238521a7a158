// Package vcr plays a recorded session back as the provider: each request
// an application sends is matched to a recorded turn by its body, and
// answered with the bytes that turn's response had — streamed with the
// recorded timing or at full speed. An application can then be re-run
// offline, at no cost, against yesterday's real answers; a request the
// recording never saw gets a 409 naming the first field that differs.
package vcr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/diff"
	"github.com/modelwire/modelwire/jsonschema"
	"github.com/modelwire/modelwire/store"
)

// Tape is a session ready to be played back.
type Tape struct {
	SessionID string
	Protocol  string
	turns     []turn

	mu     sync.Mutex
	served map[int]int // turn → how many times it was asked for
}

// turn is one recorded turn: its request and its attempts' responses, in
// order (a turn retried after a 429 answers 429 first, as it did).
type turn struct {
	n        int
	path     string
	body     any // the request body, decoded
	attempts []response
}

type response struct {
	status int
	header http.Header
	events []rawAt
	stream bool
}

type rawAt struct {
	offset time.Duration
	raw    adapters.RawEvent
}

// Load reads a session's turns and the raw bytes of every attempt.
func Load(db *store.DB, id string) (*Tape, error) {
	s, recs, err := db.Turns(id)
	if err != nil {
		return nil, err
	}
	t := &Tape{SessionID: s.ID, Protocol: s.Protocol, served: map[int]int{}}
	for _, r := range recs {
		body, err := jsonschema.ParseJSON(r.Attempt.RequestBody)
		if err != nil {
			return nil, fmt.Errorf("turn %d: the recorded request body is not JSON", r.Turn)
		}
		t.turns = append(t.turns, turn{n: r.Turn, path: urlPath(r.Attempt.URL), body: body})
	}
	for _, a := range s.Attempts {
		tr := t.turn(a.Turn)
		if tr == nil {
			continue
		}
		resp := response{status: a.StatusCode, header: a.ResponseHeader, stream: streamed(a)}
		if a.LastSeq > 0 {
			seen := map[int]bool{}
			err := db.EachEntry(id, a.FirstSeq, a.LastSeq, func(e store.Entry) error {
				if e.Attempt != a.Attempt || e.Turn != a.Turn || e.Raw == nil || seen[e.RawIndex] {
					return nil
				}
				seen[e.RawIndex] = true
				resp.events = append(resp.events, rawAt{offset: e.Offset, raw: *e.Raw})
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
		tr.attempts = append(tr.attempts, resp)
	}
	if len(t.turns) == 0 {
		return nil, fmt.Errorf("session %s has no recorded requests to play back", id)
	}
	return t, nil
}

func (t *Tape) turn(n int) *turn {
	for i := range t.turns {
		if t.turns[i].n == n {
			return &t.turns[i]
		}
	}
	return nil
}

// streamed says whether a response was an event stream.
func streamed(a store.Attempt) bool {
	ct := a.ResponseHeader.Get("Content-Type")
	if ct != "" {
		return strings.HasPrefix(ct, "text/event-stream")
	}
	return a.Stream && a.StatusCode < 400
}

func urlPath(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Path
}

// Options say how the tape plays.
type Options struct {
	// Full plays streams as fast as the connection takes them; otherwise
	// each event waits for its recorded offset.
	Full bool
}

// Mismatch is why a request matches no recorded turn: the turn it came
// nearest to and the first field that differs.
type Mismatch struct {
	Turn     int    `json:"turn"`
	Path     string `json:"path"`
	Recorded any    `json:"recorded"`
	Sent     any    `json:"sent"`
	op       string // the difference's diff.Op: which side has no value
}

func (m *Mismatch) Error() string {
	if m.Path == "" {
		return "the recording has no request like this one"
	}
	recorded, sent := diff.Text(m.Recorded), diff.Text(m.Sent)
	switch m.op {
	case diff.OpAdded:
		recorded = "nothing"
	case diff.OpRemoved:
		sent = "nothing"
	}
	return fmt.Sprintf("the recording never saw this request: it is nearest turn %d, and differs first at %s (recorded %s, sent %s)",
		m.Turn, m.Path, recorded, sent)
}

// Match finds the recorded turn a request is, by its path and its body
// (semantically: key order and whitespace do not count). Otherwise it
// names the nearest turn — the one whose history is as long as the
// request's, else the one with the fewest differences — and the first
// field that differs from it.
func (t *Tape) Match(path string, body []byte) (int, *Mismatch) {
	sent, err := jsonschema.ParseJSON(body)
	if err != nil {
		return 0, &Mismatch{Path: "(body)", Sent: string(body)}
	}
	var best *Mismatch
	bestScore := -1
	sentHist := len(adapters.HistoryItems(t.Protocol, gjson.ParseBytes(body)))
	for i := range t.turns {
		tr := &t.turns[i]
		if !samePath(tr.path, path) {
			if best == nil {
				best = &Mismatch{Turn: tr.n, Path: "(url path)", Recorded: tr.path, Sent: path}
			}
			continue
		}
		changes := diff.Values("", tr.body, sent, nil)
		if len(changes) == 0 {
			return tr.n, nil
		}
		// Nearest: the turn whose history is as long as the request's,
		// else the one with the fewest differences.
		score := len(changes)
		if recBody, _ := json.Marshal(tr.body); len(adapters.HistoryItems(t.Protocol, gjson.ParseBytes(recBody))) == sentHist {
			score = 0
		}
		if bestScore < 0 || score < bestScore {
			c := changes[0]
			best = &Mismatch{Turn: tr.n, Path: c.Path, Recorded: c.A, Sent: c.B, op: c.Op}
			bestScore = score
		}
	}
	return 0, best
}

// samePath: the request's path, or the recorded one, may carry a
// gateway's or SDK base URL's prefix.
func samePath(recorded, sent string) bool {
	return strings.HasSuffix(recorded, sent) || strings.HasSuffix(sent, recorded)
}

// Handler serves the tape.
func (t *Tape) Handler(opt Options) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "the recording answers POST requests only", http.StatusMethodNotAllowed)
			return
		}
		body, err := readAll(r)
		if err != nil {
			http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
			return
		}
		n, miss := t.Match(r.URL.Path, body)
		if miss != nil {
			t.writeMismatch(w, miss)
			return
		}
		t.mu.Lock()
		tr := t.turn(n)
		k := min(t.served[n], len(tr.attempts)-1)
		t.served[n]++
		t.mu.Unlock()
		if len(tr.attempts) == 0 {
			http.Error(w, fmt.Sprintf("turn %d was recorded without a response", n), http.StatusBadGateway)
			return
		}
		play(w, r, tr.attempts[k], opt)
	})
}

func readAll(r *http.Request) ([]byte, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(http.MaxBytesReader(nil, r.Body, 64<<20))
	return b.Bytes(), err
}

// play writes a recorded response: its status and headers, then its raw
// events as they came (SSE re-framed), each at its recorded offset unless
// opt.Full.
func play(w http.ResponseWriter, r *http.Request, resp response, opt Options) {
	for k, vs := range resp.header {
		switch http.CanonicalHeaderKey(k) {
		case "Content-Length", "Transfer-Encoding", "Connection", "Content-Encoding", "Date", "Keep-Alive":
			continue // this server frames the body itself
		}
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.Header().Set("X-Modelwire-Replay", "recorded")
	status := resp.status
	if status == 0 {
		status = http.StatusBadGateway // the recording has no response: the connection failed
	}
	w.WriteHeader(status)
	flusher, _ := w.(http.Flusher)
	start := time.Now()
	for _, ev := range resp.events {
		if !opt.Full {
			if d := ev.offset - time.Since(start); d > 0 {
				select {
				case <-time.After(d):
				case <-r.Context().Done():
					return
				}
			}
		}
		var b bytes.Buffer
		if resp.stream {
			ev.raw.WriteSSE(&b)
		} else {
			b.WriteString(ev.raw.Data)
		}
		if _, err := w.Write(b.Bytes()); err != nil {
			return
		}
		if flusher != nil && resp.stream {
			flusher.Flush()
		}
	}
}

// writeMismatch answers 409 in the provider's own error shape (its
// simulator's ErrorResponse), so an SDK shows the message, with the
// mismatch itself beside it for scripts. The official SDKs (and modelwire
// run) retry a 409 unless the server says x-should-retry: false; a
// mismatch would only come back again, so it says so (issue 27).
func (t *Tape) writeMismatch(w http.ResponseWriter, m *Mismatch) {
	msg := "modelwire replay of session " + t.SessionID + ": " + m.Error()
	body, header := mismatchBody(t.Protocol, msg)
	if e, ok := body["error"].(map[string]any); ok {
		_, hasParam := e["param"]
		if _, hasCode := e["code"]; hasParam && hasCode {
			// An error that names a code and the parameter at fault
			// (OpenAI's) names the mismatch.
			e["code"], e["param"] = "replay_mismatch", m.Path
		}
	}
	for k, vs := range header {
		w.Header()[k] = vs
	}
	body["modelwire_replay"] = m
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-should-retry", "false")
	w.WriteHeader(http.StatusConflict)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(body)
}

// mismatchBody is the protocol's own 409 error body, decoded, and the
// headers it comes with: the error for a request at fault where the
// provider answers that kind with a 409, else its plain 409. A protocol
// the simulator does not speak gets an OpenAI-shaped error.
func mismatchBody(protocol, msg string) (map[string]any, http.Header) {
	if p, err := registry.Lookup(protocol); err == nil {
		if sim, ok := p.(adapters.Simulated); ok {
			e := sim.ErrorResponse(http.StatusConflict, "invalid_request_error", msg)
			if e.Status != http.StatusConflict {
				e = sim.ErrorResponse(http.StatusConflict, "", msg)
			}
			var body map[string]any
			if json.Unmarshal(e.Body, &body) == nil && body != nil {
				return body, e.Header
			}
		}
	}
	return map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": nil, "param": nil}}, nil
}
