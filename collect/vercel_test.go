package collect_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/collect"
	"github.com/modelwire/modelwire/internal/e2e"
	"github.com/modelwire/modelwire/store"
)

// vercelStep is what the Vercel AI SDK reported of one step (jstest/agent.mjs).
type vercelStep struct {
	Text     string `json:"text"`
	Finish   string `json:"finishReason"`
	Usage    struct{ Input, Output int64 }
	Response struct{ ID, Model string }
	Calls    []struct {
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"calls"`
	Results []struct {
		ID     string          `json:"id"`
		Output json.RawMessage `json:"output"`
	} `json:"results"`
}

// TestVercelAISDK runs the refund loop written with the Vercel AI SDK
// (ai, @ai-sdk/openai pointed at the simulator; telemetry on, exported by
// @opentelemetry/exporter-trace-otlp-http as OTLP/JSON, pinned in
// jstest/package-lock.json), generating and streaming, and finds each
// call as one session: a turn per step with its usage, text, tool calls
// and their results. It needs node and npm (and the npm registry for
// `npm ci`); without node it is skipped with a message.
func TestVercelAISDK(t *testing.T) {
	e2e.Require(t, "the Vercel AI SDK check", "node", "npm")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	e2e.NPMCI(ctx, t, "jstest")
	base := startSim(t)
	for _, mode := range []string{"generate", "stream"} {
		t.Run(mode, func(t *testing.T) {
			r := newRig(t, collect.Options{})
			node := exec.CommandContext(ctx, "node", "agent.mjs", base, r.srv.URL, mode)
			node.Dir = "jstest"
			var stderr bytes.Buffer
			node.Stderr = &stderr
			out, err := node.Output()
			if err != nil {
				t.Fatalf("node: %v\n%s", err, stderr.String())
			}
			var steps []vercelStep
			if err := json.Unmarshal(out, &steps); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			r.close(t)
			got := sessions(t, r.db)
			if len(got) != 1 {
				t.Fatalf("want one session (one trace), got %d", len(got))
			}
			checkVercel(t, r.db, got[0], steps)
		})
	}
}

func checkVercel(t *testing.T, db *store.DB, s *store.Session, steps []vercelStep) {
	t.Helper()
	if len(steps) < 2 || len(steps[0].Calls) == 0 {
		t.Fatalf("the SDK's loop proposed no tool call: %+v", steps)
	}
	if s.Turns != len(steps) || len(s.Attempts) != len(steps) || s.Status != store.StatusDone || s.Provider != "openai" || s.Model != "refund-model" {
		t.Fatalf("session %d turns, %d attempts, %s, provider %q, model %q; the SDK made %d steps", s.Turns, len(s.Attempts), s.Status, s.Provider, s.Model, len(steps))
	}
	// The root span names the agent when it comes with the first spans
	// (here it does, unless the machine paused the SDK for Settle).
	if !strings.HasPrefix(s.Title, "vercel-refund · ") {
		t.Errorf("title %q: want the service first", s.Title)
	}
	sh := shapeOf(t, db, s)
	calls := map[string]store.Call{}
	for _, c := range s.Calls {
		calls[c.CallID] = c
	}
	for i, st := range steps {
		a := s.Attempts[i]
		if a.Usage == nil || *a.Usage.InputTokens != st.Usage.Input || *a.Usage.OutputTokens != st.Usage.Output || a.ResponseID != st.Response.ID {
			t.Errorf("turn %d: usage %+v id %q; the SDK saw %+v", i+1, a.Usage, a.ResponseID, st)
		}
		if !strings.HasPrefix(sh.Texts[i], fmt.Sprintf("%d.1 %s", i+1, st.Text)) {
			t.Errorf("turn %d text %q, the SDK saw %q", i+1, sh.Texts[i], st.Text)
		}
		if len(a.RequestBody) == 0 || !strings.Contains(string(a.RequestBody), "O-2048") {
			t.Errorf("turn %d: the prompt messages were not kept: %q", i+1, a.RequestBody)
		}
		for _, c := range st.Calls {
			got, ok := calls[c.ID]
			if !ok || got.Name != c.Name || got.Turn != i+1 || !jsonEqual(got.Arguments, c.Input) || got.Decision != "approved" {
				t.Errorf("turn %d call %s %s %s: stored %+v", i+1, c.ID, c.Name, c.Input, got)
			}
			if !strings.Contains(sh.Texts[i], "[call "+c.ID+" "+c.Name) {
				t.Errorf("turn %d: no proposal of %s in %q", i+1, c.ID, sh.Texts[i])
			}
		}
		for _, res := range st.Results {
			if got := calls[res.ID]; !got.HasResult || !jsonEqual(json.RawMessage(got.Result), res.Output) {
				t.Errorf("turn %d result of %s: stored %q, the SDK saw %s", i+1, res.ID, got.Result, res.Output)
			}
		}
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && pretty(x) == pretty(y)
}
