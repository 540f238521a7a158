package registry

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/redact"
)

// TestEveryDescriptorIsWhole: a protocol registered without one of the
// facts the rest of modelwire reads from its descriptor fails here, not
// in a router that silently skips it.
func TestEveryDescriptorIsWhole(t *testing.T) {
	for _, d := range All() {
		miss := func(field string, empty bool) {
			if empty {
				t.Errorf("%s: descriptor has no %s", d.Name, field)
			}
		}
		miss("Name", d.Name == "")
		miss("New", d.New == nil)
		if d.New != nil {
			miss("New() with the same Name", d.New().Name() != d.Name)
			_, sim := d.New().(adapters.Simulated)
			miss("simulator side (adapters.Simulated)", !sim)
		}
		miss("Provider", d.Provider == "")
		miss("Endpoint.Host", d.Endpoint.Host == "")
		miss("Endpoint.BaseURL", d.Endpoint.BaseURL == "")
		miss("Endpoint.BaseURLEnv", d.Endpoint.BaseURLEnv == "")
		miss("Endpoint.Paths", len(d.Endpoint.Paths) == 0)
		miss("a way to ask for a stream (StreamField or StreamAction)", d.Endpoint.StreamField == "" && d.Endpoint.StreamAction == "")
		miss("Auth.Env", d.Auth.Env == "")
		miss("a key location (Auth.Header, Bearer or Query)", d.Auth.Header == "" && !d.Auth.Bearer && d.Auth.Query == "")
		miss("Auth.Missing", d.Auth.Missing.Status == 0)
		miss("Auth.Wrong", d.Auth.Wrong.Status == 0)
		miss("HistoryField", d.HistoryField == "")
		miss("Models.Path", d.Models.Path == "")
		miss("Models.Shape", d.Models.Shape == "")
		miss("Models.NotFound", d.Models.NotFound == "")
		miss("SDK.Go (the bench's reference)", d.SDK.Go == "")
		miss("Trace.ProviderName", d.Trace.ProviderName == "")
		miss("Trace.Operation", d.Trace.Operation == "")
		miss("ReadContract", d.ReadContract == nil)
		if d.SDK.Client != "" {
			miss("SDK.Call", d.SDK.Call == "")
			miss("SDK.Known", len(d.SDK.Known) == 0)
		}
		if b := d.Batch; b != nil {
			miss("Batch.Files and Batch.Batches", b.Files == "" || b.Batches == "")
			miss("Batch.Purpose and OutputPurpose", b.Purpose == "" || b.OutputPurpose == "")
			miss("Batch.Windows", len(b.Windows) == 0)
			miss("Batch's id prefixes", b.FilePrefix == "" || b.BatchPrefix == "" || b.RequestPrefix == "")
			if r, ok := BatchRoute(b.Batches); !ok || r.Batch != b {
				t.Errorf("%s: BatchRoute(%s) does not name its batch API", d.Name, b.Batches)
			}
		}
		if d.Count != nil {
			miss("Count.Answer", d.Count.Answer == "")
			miss("Count.Needs", len(d.Count.Needs) == 0)
			miss("Count.Missing", d.Count.Missing == "")
		}
		caps, err := adapters.CapabilitiesFor(d.Provider, d.Name)
		if err != nil {
			t.Errorf("%s: no capabilities for its own provider: %v", d.Name, err)
		}
		if caps.ServerState != (d.ChainField != "") {
			t.Errorf("%s: ServerState %v but ChainField %q", d.Name, caps.ServerState, d.ChainField)
		}
		if got, ok := Route(http.MethodPost, d.Endpoint.Paths[0], hostOf(d.Endpoint.Host)); !ok || got.Name != d.Name {
			t.Errorf("%s: its own first path %s routes to %q", d.Name, d.Endpoint.Paths[0], got.Name)
		}
	}
}

func hostOf(origin string) string {
	u, _ := url.Parse(origin)
	return u.Hostname()
}

// TestRoutes are the paths the simulator and the proxy receive, and the
// URLs a HAR holds, with the protocol each is.
func TestRoutes(t *testing.T) {
	for _, c := range []struct{ path, host, want string }{
		{"/v1/responses", "", adapters.OpenAIResponses},
		{"/v1/chat/completions", "", adapters.OpenAIChat},
		{"/v1/chat/completions", "api.deepseek.com", adapters.DeepSeekChat},
		{"/chat/completions", "", adapters.DeepSeekChat},
		{"/v1/deepseek/chat/completions", "", adapters.DeepSeekChat},
		{"/v1/messages", "", adapters.AnthropicMessages},
		{"/v1beta/interactions", "", adapters.GeminiInteractions},
		{"/v1beta/models/gemini-2.5-flash:generateContent", "", adapters.Gemini},
		{"/v1beta/models/gemini-2.5-flash:streamGenerateContent", "", adapters.Gemini},
		{"/v1beta/models/:generateContent", "", ""},
		{"/v1beta/models/a/b:generateContent", "", ""},
		{"/v1/messages/count_tokens", "", ""},
		{"/v2/responses", "", ""},
		{"/x/v1/responses", "", ""},
	} {
		got, _ := Route(http.MethodPost, c.path, c.host)
		if got.Name != c.want {
			t.Errorf("POST %s (host %q) = %q, want %q", c.path, c.host, got.Name, c.want)
		}
	}
	if _, ok := Route(http.MethodGet, "/v1/responses", ""); ok {
		t.Error("GET /v1/responses routed")
	}
	for _, c := range []struct{ url, want, base string }{
		{"https://api.openai.com/v1/responses", adapters.OpenAIResponses, "/v1"},
		{"https://gw.example/openai/v1/chat/completions", adapters.OpenAIChat, "/openai/v1"},
		{"https://api.deepseek.com/v1/chat/completions", adapters.DeepSeekChat, ""},
		{"https://api.deepseek.com/chat/completions", adapters.DeepSeekChat, ""},
		{"https://api.anthropic.com/v1/messages", adapters.AnthropicMessages, ""},
		{"https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", adapters.Gemini, ""},
		{"https://generativelanguage.googleapis.com/v1beta/interactions", adapters.GeminiInteractions, ""},
		{"https://example.com/v1/embeddings", "", ""},
	} {
		u, _ := url.Parse(c.url)
		got, _ := RouteURL(u)
		if got.Name != c.want {
			t.Errorf("%s = %q, want %q", c.url, got.Name, c.want)
		} else if got.Name != "" && got.BaseURLOf(u.Path) != c.base {
			t.Errorf("%s: base path %q, want %q", c.url, got.BaseURLOf(u.Path), c.base)
		}
	}
}

func TestCountAndModelsRoutes(t *testing.T) {
	if d, ok := CountRoute(http.MethodPost, "/v1/messages/count_tokens"); !ok || d.Name != adapters.AnthropicMessages {
		t.Errorf("count_tokens = %q", d.Name)
	}
	if d, ok := CountRoute(http.MethodPost, "/v1beta/models/m:countTokens"); !ok || d.Name != adapters.Gemini {
		t.Errorf(":countTokens = %q", d.Name)
	}
	if _, ok := CountRoute(http.MethodPost, "/v1/responses"); ok {
		t.Error("/v1/responses is a count route")
	}
	anthropicHeader := http.Header{"Anthropic-Version": {"2023-06-01"}}
	for _, c := range []struct {
		path      string
		h         http.Header
		shape, id string
	}{
		{"/v1/models", nil, "openai", ""},
		{"/v1/models/gpt-5", nil, "openai", "gpt-5"},
		{"/v1/models", anthropicHeader, "anthropic", ""},
		{"/models", nil, "openai", ""},
		{"/v1beta/models", nil, "gemini", ""},
		{"/v1beta/models/gemini-2.5-flash", nil, "gemini", "gemini-2.5-flash"},
		{"/v1beta/models/gemini-2.5-flash:generateContent", nil, "", ""},
		{"/v1/modelsx", nil, "", ""},
		{"/v1/models/ft:gpt-4o:acme::x1", nil, "openai", "ft:gpt-4o:acme::x1"},
		{"/models/a:b", nil, "openai", "a:b"},
	} {
		d, id, _ := ModelsRoute(http.MethodGet, c.path, c.h)
		if d.Models.Shape != c.shape || id != c.id {
			t.Errorf("GET %s: shape %q id %q, want %q %q", c.path, d.Models.Shape, id, c.shape, c.id)
		}
	}
	if d, _, _ := ModelsRoute(http.MethodGet, "/models", nil); d.Models.OwnedBy != "deepseek" {
		t.Errorf("GET /models is %s's", d.Name)
	}
	// Responses Defers: the simulator's GET /v1/models is Chat's, as it
	// always was (its headers and errors).
	if d, _, _ := ModelsRoute(http.MethodGet, "/v1/models", nil); d.Name != adapters.OpenAIChat {
		t.Errorf("GET /v1/models is %s's", d.Name)
	}
	if d, _, _ := ModelsRoute(http.MethodGet, "/v1beta/models", nil); d.Name != adapters.Gemini {
		t.Errorf("GET /v1beta/models is %s's", d.Name)
	}
}

// TestDeclared reads the model and streaming where each protocol puts
// them, and the contract through the protocol's own reader.
func TestDeclared(t *testing.T) {
	g, _ := Describe(adapters.Gemini)
	d := g.Declared("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", parse(`{"contents":[]}`))
	if d.Model != "gemini-2.5-flash" || !d.Stream {
		t.Errorf("gemini: %+v", d)
	}
	if p, ok := g.WithPathModel("/v1beta/models/a:generateContent?x=1", "b"); !ok || p != "/v1beta/models/b:generateContent?x=1" {
		t.Errorf("WithPathModel = %q %v", p, ok)
	}
	r, _ := Describe(adapters.OpenAIResponses)
	d = r.Declared("/v1/responses", parse(`{"model":"m","stream":true,"previous_response_id":"resp_1",
		"tools":[{"type":"function","name":"f","parameters":{"type":"object"}}],
		"text":{"format":{"type":"json_schema","name":"out","schema":{"type":"object"}}}}`))
	if d.Model != "m" || !d.Stream || d.PreviousID != "resp_1" || string(d.Tools["f"]) != `{"type":"object"}` || d.SchemaName != "out" {
		t.Errorf("responses: %+v", d)
	}
}

func parse(s string) gjson.Result { return gjson.Parse(s) }

// TestKeysAreRedacted: wherever a protocol's key travels — its header, a
// bearer token, its query parameter — the one redaction removes it, so a
// new protocol's key cannot reach the store or the screen.
func TestKeysAreRedacted(t *testing.T) {
	const key = "sk-secret-0123456789"
	for _, d := range All() {
		name, value := d.Auth.SendHeader(key)
		if got := redact.HeaderValue(name, value); strings.Contains(got, key) {
			t.Errorf("%s: header %s keeps the key: %q", d.Name, name, got)
		}
		if d.Auth.Query != "" {
			u := d.Endpoint.Host + "/x?" + d.Auth.Query + "=" + key
			if got := redact.Text(u); strings.Contains(got, key) {
				t.Errorf("%s: query parameter %s keeps the key: %q", d.Name, d.Auth.Query, got)
			}
		}
	}
}

// TestReasoningSettingReadsTheEncoder: what a protocol's encoder writes
// for each reasoning level is what its descriptor's Reasoning reads back
// (stats groups sessions by it), and the levels read apart.
func TestReasoningSettingReadsTheEncoder(t *testing.T) {
	for _, d := range All() {
		if d.Reasoning == nil {
			continue
		}
		p := d.New()
		seen := map[string]string{}
		for _, level := range []string{"", "low", "high"} {
			req := &adapters.Request{Model: "gemini-2.5-flash", Limits: adapters.Limits{MaxOutputTokens: 32000, Reasoning: level},
				Sources: []adapters.Source{{ID: "task", Role: adapters.RoleUser, Trust: "user", Text: "退款 150 元"}}}
			if d.Name != adapters.Gemini && d.Name != adapters.GeminiInteractions {
				req.Model = "some-model"
			}
			hr, err := p.Encode(req, d.Provider)
			if err != nil {
				t.Errorf("%s at %q: %v", d.Name, level, err)
				continue
			}
			got := d.ReasoningSetting(hr.Body)
			if level != "" && got == "" {
				t.Errorf("%s: reasoning %q encoded as %s, read as no setting", d.Name, level, hr.Body)
			}
			if other, dup := seen[got]; dup {
				t.Errorf("%s: reasoning %q and %q both read as %q", d.Name, other, level, got)
			}
			seen[got] = level
		}
	}
	if got := mustDescribe(t, adapters.AnthropicMessages).ReasoningSetting([]byte(`{"thinking":{"type":"enabled","budget_tokens":2048}}`)); got != "type=enabled budget_tokens=2048" {
		t.Errorf("anthropic: %q", got)
	}
	if got := mustDescribe(t, adapters.OpenAIResponses).ReasoningSetting([]byte(`{"model":"m"}`)); got != "" {
		t.Errorf("no setting read as %q", got)
	}
}

func mustDescribe(t *testing.T, name string) adapters.Descriptor {
	t.Helper()
	d, ok := Describe(name)
	if !ok {
		t.Fatalf("%s is not registered", name)
	}
	return d
}
