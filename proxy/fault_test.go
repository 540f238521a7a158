package proxy

// Faults injected upstream reach the client exactly as the upstream sent
// them, and are recorded: the same request goes to a fresh simulator
// straight and to another (same faults, same seed) through the proxy; the
// status, the headers that matter and every body byte the client received
// must be the same, including where a connection was cut.

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/transport"
	"github.com/modelwire/modelwire/validate"
)

// wire is the refund request of a turn (1 or 3) as the protocol sends it.
func wire(t testing.TB, protocol string, turn int, stream bool) *adapters.HTTPRequest {
	t.Helper()
	p, err := registry.Lookup(protocol)
	if err != nil {
		t.Fatal(err)
	}
	prefix := map[string]string{adapters.AnthropicMessages: "toolu_0", adapters.OpenAIResponses: "call_0"}[protocol]
	if prefix == "" {
		prefix = "call_0"
	}
	ids := adapterstest.IDs{Call: func(turn, i int) string { return fmt.Sprintf("%s%d%dabcdef", prefix, turn, i) }}
	if protocol == adapters.OpenAIResponses {
		ids.Item = func(turn, i int) string { return fmt.Sprintf("fc_0%d%dabcdef", turn, i) }
	}
	req := adapterstest.RefundRequest(turn, ids, stream)
	w, err := p.Encode(req, adapters.ProviderSim)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// received is what a client got.
type received struct {
	status  int
	header  http.Header
	body    []byte
	readErr error // how reading the body ended (nil: cleanly)
}

var rawClient = &http.Client{Transport: &http.Transport{DisableCompression: true}}

// send sends a wire request to base with the protocol's key header.
func send(t testing.TB, base, protocol string, w *adapters.HTTPRequest, key string) received {
	t.Helper()
	req, err := http.NewRequest(w.Method, transport.Provider{BaseURL: base}.URL(w.Path), bytes.NewReader(w.Body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range w.Headers {
		req.Header.Set(k, v)
	}
	transport.Provider{Key: key}.Authorize(req.Header, protocol)
	resp, err := rawClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, rerr := io.ReadAll(resp.Body)
	return received{status: resp.StatusCode, header: resp.Header, body: body, readErr: rerr}
}

// sameAsUpstream checks what the client got through the proxy against
// what the simulator wrote for that very request (every header it set,
// every body byte, and a cut where it cut), and against a client of a
// second simulator straight (status, length, how the body ended: the
// simulators' random request ids differ).
func sameAsUpstream(t *testing.T, via received, upstream *sent, direct received) {
	t.Helper()
	if via.status != upstream.status || via.status != direct.status {
		t.Errorf("status %d through the proxy; the simulator sent %d (%d straight)", via.status, upstream.status, direct.status)
	}
	for k := range upstream.header {
		if strings.Join(via.header.Values(k), ",") != strings.Join(upstream.header.Values(k), ",") {
			t.Errorf("header %s %q through the proxy, the simulator sent %q", k, via.header.Values(k), upstream.header.Values(k))
		}
	}
	if !bytes.Equal(via.body, upstream.body) {
		t.Errorf("body differs: %d bytes through the proxy, the simulator sent %d\nvia  %q\nsent %q", len(via.body), len(upstream.body), tail(via.body), tail(upstream.body))
	}
	if len(via.body) != len(direct.body) {
		t.Errorf("%d body bytes through the proxy, %d straight", len(via.body), len(direct.body))
	}
	if (via.readErr == nil) != (direct.readErr == nil) {
		t.Errorf("reading the body ended with %v through the proxy, %v straight", via.readErr, direct.readErr)
	}
}

func tail(b []byte) []byte {
	if len(b) > 160 {
		return b[len(b)-160:]
	}
	return b
}

// httpError checks a fault answered with an HTTP error status: the client
// got it (a 429 with Retry-After: 1), the attempt is recorded failed with
// the one body as its raw event, the transport layer fails naming the
// status and there is no response for the protocol layer to judge.
func httpError(status int) func(t *testing.T, got received, a store.Attempt, l map[validate.Layer]store.ValidationRecord) {
	return func(t *testing.T, got received, a store.Attempt, l map[validate.Layer]store.ValidationRecord) {
		if got.status != status || status == 429 && got.header.Get("Retry-After") != "1" {
			t.Errorf("client got %d Retry-After %q", got.status, got.header.Get("Retry-After"))
		}
		if a.StatusCode != status || a.RawEvents != 1 || a.TerminalStatus != adapters.StatusFailed || a.State != store.StatusFailed {
			t.Errorf("attempt: status %d raw %d terminal %q state %q", a.StatusCode, a.RawEvents, a.TerminalStatus, a.State)
		}
		if l[session.LayerTransport].Status != session.Fail || !strings.Contains(l[session.LayerTransport].Detail, fmt.Sprintf("HTTP %d", status)) || l[session.LayerProtocol].Status != session.Skip {
			t.Errorf("layers %+v", l)
		}
	}
}

func TestFaultsReachTheClientAsSent(t *testing.T) {
	cases := []struct {
		fault  string
		turn   int
		stream bool
		check  func(t *testing.T, got received, a store.Attempt, layers map[validate.Layer]store.ValidationRecord)
	}{
		{"disconnect-mid-text", 3, true, func(t *testing.T, got received, a store.Attempt, l map[validate.Layer]store.ValidationRecord) {
			if got.readErr == nil || got.status != 200 {
				t.Errorf("the client's stream was not cut: %d %v", got.status, got.readErr)
			}
			if l[session.LayerTransport].Status != session.Fail || !strings.Contains(l[session.LayerTransport].Detail, "the stream broke") {
				t.Errorf("transport %+v", l[session.LayerTransport])
			}
			if l[session.LayerProtocol].Status != session.Fail || a.TerminalStatus != adapters.StatusUnknown || a.State != store.StatusFailed {
				t.Errorf("protocol %+v, terminal %q, state %q", l[session.LayerProtocol], a.TerminalStatus, a.State)
			}
		}},
		{"disconnect-mid-args", 1, true, func(t *testing.T, got received, a store.Attempt, l map[validate.Layer]store.ValidationRecord) {
			if got.readErr == nil {
				t.Error("the client's stream was not cut")
			}
			if l[session.LayerProtocol].Status != session.Fail || !strings.Contains(l[session.LayerProtocol].Detail, "cut") {
				t.Errorf("protocol %+v", l[session.LayerProtocol])
			}
		}},
		{"rate-limit", 1, true, httpError(429)},
		{"error-after-200", 1, true, func(t *testing.T, got received, a store.Attempt, l map[validate.Layer]store.ValidationRecord) {
			if got.status != 200 || got.readErr != nil {
				t.Errorf("client got %d %v", got.status, got.readErr)
			}
			if a.TerminalStatus != adapters.StatusFailed || l[session.LayerTransport].Status != session.Pass || l[session.LayerProtocol].Status != session.Fail {
				t.Errorf("terminal %q, layers %+v", a.TerminalStatus, l)
			}
		}},
		{"rate-limit", 1, false, httpError(429)},
		{"server-error", 1, false, httpError(500)},
		{"truncate", 1, false, func(t *testing.T, got received, a store.Attempt, l map[validate.Layer]store.ValidationRecord) {
			if got.status != 200 || got.readErr != nil {
				t.Errorf("client got %d %v", got.status, got.readErr)
			}
			// The attempt read its body to the end; the truncation is the
			// protocol layer's failure.
			if a.TerminalStatus != adapters.StatusIncomplete || a.State != store.StatusDone {
				t.Errorf("attempt: terminal %q state %q", a.TerminalStatus, a.State)
			}
			if l[session.LayerTransport].Status != session.Pass || l[session.LayerProtocol].Status != session.Fail ||
				!strings.HasPrefix(l[session.LayerProtocol].Detail, "truncated (") {
				t.Errorf("layers %+v", l)
			}
		}},
	}
	for _, protocol := range []string{adapters.OpenAIChat, adapters.DeepSeekChat, adapters.OpenAIResponses, adapters.AnthropicMessages, adapters.Gemini} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/%s/turn%d/stream=%v", protocol, c.fault, c.turn, c.stream), func(t *testing.T) {
				w := wire(t, protocol, c.turn, c.stream)
				simURL, _ := startSim(t, c.fault)
				direct := send(t, simURL, protocol, w, sdkKey)
				r := newRig(t, c.fault, Options{})
				via := send(t, r.url, protocol, w, sdkKey)
				sent := r.sim.responses()
				sameAsUpstream(t, via, sent[0], direct)

				sessions := r.stop()
				if len(sessions) != 1 || len(sessions[0].Attempts) != 1 {
					t.Fatalf("%d sessions recorded", len(sessions))
				}
				s := sessions[0]
				a := s.Attempts[0]
				if a.StatusCode != sent[0].status {
					t.Errorf("recorded status %d, the simulator sent %d", a.StatusCode, sent[0].status)
				}
				if n := rawEvents(t, protocol, sent[0]); a.RawEvents != n {
					t.Errorf("%d raw events recorded, the simulator sent %d", a.RawEvents, n)
				}
				l := map[validate.Layer]store.ValidationRecord{}
				for _, v := range s.Validations {
					l[validate.Layer(v.Layer)] = v
				}
				if s.Status != store.StatusFailed && (l[session.LayerTransport].Status == session.Fail || l[session.LayerProtocol].Status == session.Fail) {
					t.Errorf("session status %s with layers %+v", s.Status, l)
				}
				c.check(t, via, a, l)
			})
		}
	}
}

// A retry of a failed request is the next attempt of the same turn.
func TestRetryIsAnAttempt(t *testing.T) {
	r := newRig(t, "rate-limit", Options{})
	w := wire(t, adapters.AnthropicMessages, 1, true)
	if got := send(t, r.url, adapters.AnthropicMessages, w, sdkKey); got.status != 429 {
		t.Fatalf("first try: %d", got.status)
	}
	if got := send(t, r.url, adapters.AnthropicMessages, w, sdkKey); got.status != 200 {
		t.Fatalf("retry: %d", got.status)
	}
	sessions := r.stop()
	if len(sessions) != 1 {
		t.Fatalf("%d sessions", len(sessions))
	}
	s := sessions[0]
	if s.Turns != 1 || len(s.Attempts) != 2 || s.Attempts[1].Attempt != 2 || !strings.Contains(s.Attempts[1].RetryReason, "429") {
		t.Fatalf("turns %d, attempts %+v", s.Turns, s.Attempts)
	}
	if s.Status != store.StatusDone {
		t.Errorf("a turn mended by its retry: session %s", s.Status)
	}
}

// The upstream going away before it answers is a 502 from the proxy, and
// recorded as a transport failure.
func TestUnreachableUpstream(t *testing.T) {
	r := newRig(t, "", Options{})
	r.px.opts.Upstream = "http://127.0.0.1:1"
	w := wire(t, adapters.OpenAIChat, 1, false)
	got := send(t, r.url, adapters.OpenAIChat, w, sdkKey)
	if got.status != http.StatusBadGateway || !bytes.Contains(got.body, []byte("cannot reach the upstream")) {
		t.Errorf("client got %d %s", got.status, got.body)
	}
	sessions := r.stop()
	if len(sessions) != 1 || len(sessions[0].Attempts) != 1 {
		t.Fatalf("%d sessions", len(sessions))
	}
	a := sessions[0].Attempts[0]
	if a.StatusCode != 0 || a.State != store.StatusFailed || !strings.Contains(a.Error, "cannot reach") {
		t.Errorf("attempt %+v", a)
	}
	if sessions[0].Status != store.StatusFailed {
		t.Errorf("session %s", sessions[0].Status)
	}
}
