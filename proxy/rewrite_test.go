package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/jsonl"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/timeline"
)

// decodeAll decodes a response as the proxy's recorder does.
func decodeAll(t *testing.T, protocol string, stream bool, body []byte) adapters.Summary {
	t.Helper()
	prot, err := registry.Lookup(protocol)
	if err != nil {
		t.Fatal(err)
	}
	st := adapters.NewStream(prot)
	if !stream {
		st.FeedBody(body)
		return st.Summary()
	}
	if err := adapters.ReadStream(prot, st, bytes.NewReader(body), func(adapters.Step) error { return nil }); err != nil {
		t.Fatal(err)
	}
	return st.Summary()
}

// Edited by the decider, for every protocol, streamed and not: the
// client's bytes decode to the upstream's response with the edited
// arguments — same response id, model, call ids, stop reason — and
// without a diagnostic (argument deltas agree with their done events).
func TestEditReencodesEveryProtocol(t *testing.T) {
	const edited = `{"line_id":"L9","order_id":"O-2048"}`
	for _, protocol := range protocols {
		for _, stream := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/stream=%v", protocol, stream), func(t *testing.T) {
				d := &fakeDecider{answer: func(session.Proposal) session.Decision {
					return session.Decision{Kind: session.Edited, Arguments: json.RawMessage(edited)}
				}}
				r := newRig(t, "", Options{Hold: d})
				got := send(t, r.url, protocol, wire(t, protocol, 1, stream), sdkKey)
				up := r.sim.responses()[0]
				if got.status != 200 || got.readErr != nil || got.header.Get("X-Modelwire-Edit") != "edited" {
					t.Fatalf("client got %d (%v) %s", got.status, got.readErr, got.body)
				}
				if got.header.Get("Content-Type") != up.header.Get("Content-Type") {
					t.Errorf("content type %q, upstream %q", got.header.Get("Content-Type"), up.header.Get("Content-Type"))
				}
				want := decodeAll(t, protocol, stream, up.body)
				have := decodeAll(t, protocol, stream, got.body)
				if len(have.Diagnostics) > 0 {
					t.Errorf("diagnostics %+v", have.Diagnostics)
				}
				if have.ResponseID != want.ResponseID || have.Model != want.Model || have.StopReason != want.StopReason || len(have.ToolCalls) != len(want.ToolCalls) {
					t.Fatalf("decoded %+v\nupstream %+v", have, want)
				}
				for i, c := range have.ToolCalls {
					if c.CallID != want.ToolCalls[i].CallID || c.Name != want.ToolCalls[i].Name || adapters.Canonical(string(c.Arguments)) != edited {
						t.Errorf("call %d: %+v, upstream %+v", i, c, want.ToolCalls[i])
					}
				}
				if have.Text != want.Text || have.Reasoning != want.Reasoning {
					t.Errorf("text %q reasoning %q, upstream %q %q", have.Text, have.Reasoning, want.Text, want.Reasoning)
				}
			})
		}
	}
}

// A rule edits a final answer's text and stop reason; the session keeps
// both edits beside the originals.
func TestRuleEditsTextAndStop(t *testing.T) {
	r := newRig(t, "", Options{Rules: mustRules(t, `{"rules": [{"match": {"direction": "response", "turn": 1},
	  "edit": {"text": "edited answer", "stop": "truncated"}}]}`)})
	got := send(t, r.url, adapters.AnthropicMessages, wire(t, adapters.AnthropicMessages, 3, true), sdkKey)
	sum := decodeAll(t, adapters.AnthropicMessages, true, got.body)
	if sum.Text != "edited answer" || sum.StopReason != adapters.StopTruncated {
		t.Fatalf("decoded %q %s from %s", sum.Text, sum.StopReason, got.body)
	}
	names := map[string]bool{}
	for _, c := range r.stop()[0].Calls {
		names[c.Name] = c.Decision == session.Edited && len(c.Edited) > 0
	}
	if !names[EditedText] || !names[EditedStop] || !names[ClientBytes] {
		t.Errorf("recorded %v", names)
	}
}

// A session with edits (a call, a request, the client's bytes) exports to
// JSONL and imports back whole.
func TestEditedSessionRoundTripsJSONL(t *testing.T) {
	r := newRig(t, "", Options{Rules: mustRules(t, `{"rules": [
	  {"match": {"direction": "response"}, "edit": {"arguments": {"get_order_line": {"line_id": "L2"}}}},
	  {"edit": {"merge": {"temperature": 1}}}]}`)})
	_ = send(t, r.url, adapters.OpenAIChat, wire(t, adapters.OpenAIChat, 1, true), sdkKey)
	s := r.stop()[0]
	db, err := store.Open(r.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var buf bytes.Buffer
	if err := jsonl.Export(db, &buf, s.ID); err != nil {
		t.Fatal(err)
	}
	fresh, err := store.Open(filepath.Join(t.TempDir(), "fresh.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if _, err := jsonl.Import(fresh, bytes.NewReader(buf.Bytes()), "edited.jsonl"); err != nil {
		t.Fatalf("import: %v", err)
	}
	// The workbench's replay folds every entry, edits included.
	rp, err := timeline.NewReplayer(db, s.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rp.Seek(rp.Len()); err != nil {
		t.Fatal(err)
	}
	if rp.State() == nil {
		t.Error("no state at the end")
	}
}
