package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/sim"
)

type assembled struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers"`
	Body    map[string]any    `json:"body"`
	Map     []struct {
		Source, Trust, Field string
	} `json:"map"`
}

func assembleJSON(t *testing.T, args ...string) assembled {
	t.Helper()
	code, out, errs := runMain(t, "", append([]string{"assemble", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var a assembled
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return a
}

func fieldOf(a assembled, source string) string {
	for _, m := range a.Map {
		if m.Source == source {
			return m.Field
		}
	}
	return ""
}

// Where the skill, the system rules and the unverified history land is
// what a teacher projects: check it for each protocol.
func TestAssemblePlacesSources(t *testing.T) {
	want := map[string][3]string{ // protocol: system rules, skill, unverified history
		"openai-responses":   {"input[0].content", "input[1].content", "input[3].content[3].text"},
		"openai-chat":        {"messages[0].content", "messages[1].content", "messages[2].content[4].text"},
		"anthropic-messages": {"system[0].text", "system[1].text", "messages[0].content[4].text"},
		"gemini":             {"systemInstruction.parts[0].text", "systemInstruction.parts[1].text", "contents[0].parts[4].text"},
	}
	for p, w := range want {
		a := assembleJSON(t, "--protocol", p)
		got := [3]string{fieldOf(a, "system-rules"), fieldOf(a, "skill:refund_assessment@1.2"), fieldOf(a, "history:unverified")}
		if got != w {
			t.Errorf("%s: fields %q, want %q", p, got, w)
		}
		for _, m := range a.Map {
			if m.Source == "history:unverified" && m.Trust != "unverified" {
				t.Errorf("%s: the history claim is labelled %q", p, m.Trust)
			}
		}
		for k, v := range a.Headers {
			if (k == "authorization" || k == "x-api-key" || k == "x-goog-api-key") && !strings.Contains(v, "[redacted]") {
				t.Errorf("%s: header %s shows %q", p, k, v)
			}
		}
	}
}

// Turn 3 carries the history exactly as run sends it: the model's calls
// and the tool results, answered by call id.
func TestAssembleLaterTurnsCarryHistory(t *testing.T) {
	a := assembleJSON(t, "--protocol", "anthropic-messages", "--turn", "3")
	msgs := a.Body["messages"].([]any)
	if len(msgs) != 5 {
		t.Fatalf("%d messages, want user, assistant, user(results), assistant, user(results)", len(msgs))
	}
	results := msgs[4].(map[string]any)["content"].([]any)
	calls := msgs[3].(map[string]any)["content"].([]any)
	var callIDs, resultIDs []string
	for _, c := range calls {
		if m := c.(map[string]any); m["type"] == "tool_use" {
			callIDs = append(callIDs, m["id"].(string))
		}
	}
	for _, r := range results {
		resultIDs = append(resultIDs, r.(map[string]any)["tool_use_id"].(string))
	}
	if len(callIDs) != 2 || strings.Join(callIDs, ",") != strings.Join(resultIDs, ",") {
		t.Fatalf("calls %v, results %v", callIDs, resultIDs)
	}
	prev := assembleJSON(t, "--protocol", "openai-responses", "--turn", "2", "--history", "previous-response-id")
	if id, _ := prev.Body["previous_response_id"].(string); !strings.HasPrefix(id, "resp_") {
		t.Fatalf("previous_response_id %v", prev.Body["previous_response_id"])
	}
	// Interactions chained on the server: only the new function_result
	// steps travel, the sources stay with the stored interaction.
	chained := assembleJSON(t, "--protocol", "gemini-interactions", "--turn", "3", "--history", "previous-response-id")
	steps, _ := chained.Body["input"].([]any)
	if id, _ := chained.Body["previous_interaction_id"].(string); !strings.HasPrefix(id, "v1_") || len(steps) != 2 ||
		steps[0].(map[string]any)["type"] != "function_result" || chained.Path != "/v1beta/interactions" {
		t.Fatalf("chained interactions request %s %v", chained.Path, chained.Body)
	}
	full := assembleJSON(t, "--protocol", "gemini-interactions", "--turn", "3")
	if steps, _ := full.Body["input"].([]any); len(steps) < 7 || full.Body["previous_interaction_id"] != nil {
		t.Fatalf("full interactions history %v", full.Body["input"])
	}
	if code, _, errs := runMain(t, "", "assemble", "--protocol", "gemini", "--history", "previous-response-id"); code != 2 ||
		!strings.Contains(errs, "openai-responses and gemini-interactions") {
		t.Fatalf("previous-response-id on gemini: exit %d %s", code, errs)
	}
	if code, _, errs := runMain(t, "", "assemble", "--turn", "9"); code != 2 || !strings.Contains(errs, "ended after 3 requests") {
		t.Fatalf("exit %d %s", code, errs)
	}
}

func TestAssembleTextShowsTheMap(t *testing.T) {
	code, out, errs := runMain(t, "", "assemble", "--protocol", "gemini")
	if code != 0 {
		t.Fatal(errs)
	}
	for _, want := range []string{"POST /v1beta/models/refund-model:streamGenerateContent?alt=sse", "x-goog-api-key: [redacted]", "where each source went:", "history:unverified", "systemInstruction.parts[1].text", "degraded:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

// The real providers are tested by pointing them at the simulator: keys
// from the environment, base URLs from the flag or <PROVIDER>_BASE_URL.
func TestRealProvidersAgainstTheSimulator(t *testing.T) {
	sc, _ := samples.Lookup("refund")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	simBase, err := sim.New(sim.Options{Scenario: sc}).Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// A pass-through in front of the simulator keeps what each request
	// carried, so the test sees where the key went.
	target, _ := url.Parse(simBase)
	var mu sync.Mutex
	var seen []*http.Request
	rp := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Clone(context.Background()))
		mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	defer front.Close()
	base := front.URL
	cases := []struct{ provider, protocol, env, url, header, value string }{
		{"openai", "openai-responses", "OPENAI", base + "/v1", "Authorization", "Bearer sk-test-openai"},
		{"openai", "openai-chat", "OPENAI", base + "/v1", "Authorization", "Bearer sk-test-openai"},
		{"anthropic", "anthropic-messages", "ANTHROPIC", base, "X-Api-Key", "sk-test-anthropic"},
		{"gemini", "gemini", "GEMINI", base, "X-Goog-Api-Key", "sk-test-gemini"},
		{"gemini", "gemini-interactions", "GEMINI", base, "X-Goog-Api-Key", "sk-test-gemini"},
		{"deepseek", "deepseek-chat", "DEEPSEEK", base, "Authorization", "Bearer sk-test-deepseek"},
		{"compatible", "openai-chat", "COMPATIBLE", base + "/v1", "Authorization", "Bearer sk-test-compatible"},
	}
	for _, c := range cases {
		t.Run(c.provider+"/"+c.protocol, func(t *testing.T) {
			mu.Lock()
			seen = nil
			mu.Unlock()
			t.Setenv(c.env+"_API_KEY", "sk-test-"+c.provider)
			t.Setenv(c.env+"_BASE_URL", c.url)
			db := filepath.Join(t.TempDir(), "x.db")
			code, _, errs := runMain(t, "", "run", "--db", db, "--provider", c.provider, "--protocol", c.protocol, "--approve", "auto", "--model", "refund-model")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			mu.Lock()
			defer mu.Unlock()
			// Anthropic and Gemini also count each request's tokens first
			// (count_tokens, :countTokens); those carry the key too.
			models := 0
			for _, r := range seen {
				if !strings.HasSuffix(r.URL.Path, "count_tokens") && !strings.HasSuffix(r.URL.Path, ":countTokens") {
					models++
				}
			}
			if models != 3 {
				t.Fatalf("the simulator saw %d model requests, want the refund case's 3", models)
			}
			for i, r := range seen {
				if got := r.Header.Values(c.header); len(got) != 1 || got[0] != c.value {
					t.Errorf("request %d: %s %q, want %q", i+1, c.header, got, c.value)
				}
				// The key goes in that header only: not in another, not in the URL.
				for k, vs := range r.Header {
					for _, v := range vs {
						if http.CanonicalHeaderKey(k) != c.header && strings.Contains(v, "sk-test-") {
							t.Errorf("request %d: the key is in %s too", i+1, k)
						}
					}
				}
				if strings.Contains(r.URL.String(), "sk-test-") {
					t.Errorf("request %d: the key is in the URL %s", i+1, r.URL)
				}
			}
		})
	}
	t.Run("missing key", func(t *testing.T) {
		t.Setenv("ANTHROPIC_API_KEY", "")
		code, _, errs := runMain(t, "", "run", "--provider", "anthropic", "--protocol", "anthropic-messages", "--approve", "auto", "--db", filepath.Join(t.TempDir(), "x.db"))
		if code != 2 || !strings.Contains(errs, "ANTHROPIC_API_KEY") {
			t.Fatalf("exit %d %s", code, errs)
		}
	})
	t.Run("wrong protocol", func(t *testing.T) {
		code, _, errs := runMain(t, "", "run", "--provider", "anthropic", "--protocol", "gemini", "--approve", "auto")
		if code != 2 || !strings.Contains(errs, "does not speak gemini") {
			t.Fatalf("exit %d %s", code, errs)
		}
	})
}
