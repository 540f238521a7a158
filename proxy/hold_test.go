package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/validate"
)

// fakeDecider answers hold questions with a function and keeps them.
type fakeDecider struct {
	mu     sync.Mutex
	asked  []session.Proposal
	answer func(p session.Proposal) session.Decision
}

func (d *fakeDecider) Decide(_ context.Context, p session.Proposal) (session.Decision, error) {
	d.mu.Lock()
	d.asked = append(d.asked, p)
	d.mu.Unlock()
	return d.answer(p), nil
}

func approveAll(session.Proposal) session.Decision { return session.Decision{Kind: session.Approved} }

func rejectAll(session.Proposal) session.Decision {
	return session.Decision{Kind: session.Rejected, Reason: "no refunds today"}
}

var protocols = []string{adapters.OpenAIChat, adapters.DeepSeekChat, adapters.OpenAIResponses, adapters.AnthropicMessages, adapters.Gemini}

// Approved: the client gets exactly what the upstream sent.
func TestHoldApprovePassesUnchanged(t *testing.T) {
	for _, protocol := range protocols {
		for _, stream := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/stream=%v", protocol, stream), func(t *testing.T) {
				d := &fakeDecider{answer: approveAll}
				r := newRig(t, "", Options{Hold: d})
				got := send(t, r.url, protocol, wire(t, protocol, 1, stream), sdkKey)
				up := r.sim.responses()[0]
				if got.status != 200 || !bytes.Equal(got.body, up.body) || got.readErr != nil {
					t.Fatalf("client got %d, %d bytes (%v); the simulator sent %d bytes", got.status, len(got.body), got.readErr, len(up.body))
				}
				if got.header.Get("Content-Type") != up.header.Get("Content-Type") {
					t.Errorf("content type %q", got.header.Get("Content-Type"))
				}
				if len(d.asked) != 1 || d.asked[0].Name != "get_order_line" || d.asked[0].Turn != 1 || !d.asked[0].Valid() {
					t.Fatalf("asked %+v", d.asked)
				}
				s := r.stop()[0]
				if len(s.Calls) != 1 || s.Calls[0].Decision != session.Approved {
					t.Errorf("calls %+v", s.Calls)
				}
			})
		}
	}
}

// Rejected: the client gets the provider's own error, its status and
// shape, saying why.
func TestHoldRejectIsProviderError(t *testing.T) {
	wantType := map[string]string{
		adapters.OpenAIChat: "invalid_request_error", adapters.DeepSeekChat: "invalid_request_error",
		adapters.OpenAIResponses: "permission_error", adapters.AnthropicMessages: "permission_error", adapters.Gemini: "PERMISSION_DENIED",
	}
	for _, protocol := range protocols {
		for _, stream := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/stream=%v", protocol, stream), func(t *testing.T) {
				d := &fakeDecider{answer: rejectAll}
				r := newRig(t, "", Options{Hold: d})
				got := send(t, r.url, protocol, wire(t, protocol, 1, stream), sdkKey)
				if got.status != http.StatusForbidden || !strings.HasPrefix(got.header.Get("Content-Type"), "application/json") {
					t.Fatalf("client got %d %q: %s", got.status, got.header.Get("Content-Type"), got.body)
				}
				p, _ := registry.Lookup(protocol)
				e := p.DecodeError(got.status, got.header, got.body)
				if e.Type != wantType[protocol] || !strings.Contains(e.Message, "the operator rejected the tool call get_order_line") || !strings.Contains(e.Message, "no refunds today") {
					t.Errorf("decoded %+v from %s", e, got.body)
				}
				if !json.Valid(got.body) {
					t.Errorf("body is not JSON: %s", got.body)
				}
				s := r.stop()[0]
				if len(s.Calls) != 1 || s.Calls[0].Decision != session.Rejected || s.Calls[0].Reason != "no refunds today" {
					t.Errorf("calls %+v", s.Calls)
				}
				for _, v := range s.Validations {
					if validate.Layer(v.Layer) == validate.Transport && !strings.Contains(v.Detail, "replaced by the proxy's HTTP 403") {
						t.Errorf("transport %q", v.Detail)
					}
				}
			})
		}
	}
}

// The SDKs raise the error they know for a rejection.
func TestHoldRejectSDKErrors(t *testing.T) {
	rc := refund(t)
	r := newRig(t, "", Options{Hold: &fakeDecider{answer: rejectAll}})
	_, err := chatRun(t, rc, true, false)(context.Background(), r.url, http.DefaultClient)
	var oe *openai.Error
	if !errors.As(err, &oe) || oe.StatusCode != 403 || !strings.Contains(oe.Message, "operator rejected") {
		t.Errorf("openai-go: %v", err)
	}
	_, err = anthropicRun(t, rc, false)(context.Background(), r.url, http.DefaultClient)
	var ae *anthropic.Error
	if !errors.As(err, &ae) || ae.StatusCode != 403 || !strings.Contains(ae.Error(), "permission_error") {
		t.Errorf("anthropic-sdk-go: %v", err)
	}
}

// A call that fails the request's own tool schema cannot be approved; an
// edit is refused and asked again; a final answer is never held.
func TestHoldGateEditAndFinal(t *testing.T) {
	t.Run("gate", func(t *testing.T) {
		d := &fakeDecider{answer: approveAll}
		r := newRig(t, "", Options{Hold: d})
		w := wire(t, adapters.OpenAIChat, 1, true)
		// The application's schema wants line_id as a number: the model's
		// string fails it.
		w.Body = bytes.Replace(w.Body, []byte(`"line_id":{"type":"string"`), []byte(`"line_id":{"type":"integer"`), 1)
		got := send(t, r.url, adapters.OpenAIChat, w, sdkKey)
		if got.status != 403 || !bytes.Contains(got.body, []byte("fail the tool's schema")) {
			t.Fatalf("client got %d %s", got.status, got.body)
		}
		if len(d.asked) != 1 || d.asked[0].Valid() {
			t.Errorf("asked %+v", d.asked)
		}
	})
	t.Run("edit", func(t *testing.T) {
		// Not JSON first: asked again with a one-line reason; then an edit
		// the application gets, re-encoded in Anthropic's own body.
		tries := 0
		d := &fakeDecider{answer: func(p session.Proposal) session.Decision {
			tries++
			if tries == 1 {
				return session.Decision{Kind: session.Edited, Arguments: json.RawMessage(`{"order_id":`)}
			}
			return session.Decision{Kind: session.Edited, Arguments: json.RawMessage(`{"order_id": "O-2048", "line_id": "L2"}`)}
		}}
		r := newRig(t, "", Options{Hold: d})
		got := send(t, r.url, adapters.AnthropicMessages, wire(t, adapters.AnthropicMessages, 1, false), sdkKey)
		if got.status != 200 || len(d.asked) != 2 || !strings.Contains(d.asked[1].EditError, "not valid JSON") || strings.Contains(d.asked[1].EditError, "\n") {
			t.Fatalf("client got %d; asked %+v", got.status, d.asked)
		}
		if !bytes.Contains(got.body, []byte(`"input":{"order_id":"O-2048","line_id":"L2"}`)) || !bytes.Contains(got.body, []byte(`"id":"toolu_order"`)) {
			t.Errorf("the client did not get the edited call: %s", got.body)
		}
		s := r.stop()[0]
		var edited bool
		for _, dec := range s.Calls {
			if dec.Decision == session.Edited && dec.Name == "get_order_line" && string(dec.Edited) == `{"order_id":"O-2048","line_id":"L2"}` && strings.Contains(string(dec.Arguments), `"L1"`) && strings.Contains(dec.Reason, "person") {
				edited = true
			}
		}
		if !edited {
			t.Errorf("calls %+v", s.Calls)
		}
	})
	t.Run("final", func(t *testing.T) {
		d := &fakeDecider{answer: rejectAll}
		r := newRig(t, "", Options{Hold: d})
		got := send(t, r.url, adapters.Gemini, wire(t, adapters.Gemini, 3, true), sdkKey)
		if got.status != 200 || !bytes.Equal(got.body, r.sim.responses()[0].body) || len(d.asked) != 0 {
			t.Fatalf("client got %d; asked %d", got.status, len(d.asked))
		}
		s := r.stop()[0]
		if s.Status != store.StatusDone {
			t.Errorf("session %s", s.Status)
		}
	})
}
