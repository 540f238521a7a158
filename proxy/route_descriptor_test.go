package proxy

import (
	"net/http"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
)

// TestRoutesAsTheRegistry: classify, defaultUpstream and providerOf read
// the descriptors, and keep their answers for the paths and hosts they
// always knew.
func TestRoutesAsTheRegistry(t *testing.T) {
	for _, c := range []struct{ method, path, upstream, want string }{
		{"POST", "/v1/responses", "", adapters.OpenAIResponses},
		{"POST", "/v1/chat/completions", "", adapters.OpenAIChat},
		{"POST", "/v1/chat/completions", "https://api.deepseek.com/v1", adapters.DeepSeekChat},
		{"POST", "/chat/completions", "", adapters.DeepSeekChat},
		{"POST", "/v1/messages", "", adapters.AnthropicMessages},
		{"POST", "/v1beta/interactions", "", adapters.GeminiInteractions},
		{"POST", "/v1beta/models/gemini-2.5-flash:generateContent", "", adapters.Gemini},
		{"POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent", "", adapters.Gemini},
		{"GET", "/v1/responses", "", ""},
		{"POST", "/v1/messages/count_tokens", "", ""},
		{"POST", "/v1beta/models/m:countTokens", "", ""},
	} {
		if got := classify(c.method, c.path, c.upstream); got != c.want {
			t.Errorf("classify(%s %s, %q) = %q, want %q", c.method, c.path, c.upstream, got, c.want)
		}
	}
	for _, d := range registry.All() {
		if got := defaultUpstream(d.Name, "/", nil); got != d.Endpoint.Host || got == "" {
			t.Errorf("defaultUpstream(%s) = %q, want %q", d.Name, got, d.Endpoint.Host)
		}
		if got := providerOf(d.Endpoint.Host); got != d.Provider {
			t.Errorf("providerOf(%s) = %q, want %q", d.Endpoint.Host, got, d.Provider)
		}
	}
	for _, c := range []struct {
		path, header, want string
	}{
		{"/v1/complete", "", "https://api.anthropic.com"},
		{"/v1/files", "Anthropic-Version", "https://api.anthropic.com"},
		{"/v1beta/files", "", "https://generativelanguage.googleapis.com"},
		{"/upload/v1beta/files", "", "https://generativelanguage.googleapis.com"},
		{"/x", "X-Goog-Api-Key", "https://generativelanguage.googleapis.com"},
		{"/v1/embeddings", "", "https://api.openai.com"},
		{"/healthz", "", ""},
	} {
		h := http.Header{}
		if c.header != "" {
			h.Set(c.header, "v")
		}
		if got := defaultUpstream("", c.path, h); got != c.want {
			t.Errorf("defaultUpstream(%s, %s) = %q, want %q", c.path, c.header, got, c.want)
		}
	}
	for host, want := range map[string]string{"https://api.openai.com/v1": adapters.ProviderOpenAI, "https://eu.api.deepseek.com": adapters.ProviderDeepSeek,
		"http://127.0.0.1:8080": adapters.ProviderCompatible, "": adapters.ProviderCompatible} {
		if got := providerOf(host); got != want {
			t.Errorf("providerOf(%s) = %q, want %q", host, got, want)
		}
	}
}

// TestReadRequestByDescriptor: the model and streaming come from the path
// for a protocol that names them there, from the body else; chaining from
// the descriptor's ChainField.
func TestReadRequestByDescriptor(t *testing.T) {
	g := readRequest(adapters.Gemini, "/v1beta/models/gemini-2.5-flash:streamGenerateContent", []byte(`{"model":"no","contents":[{"role":"user","parts":[{"text":"hi"}]}]}`))
	if g.model != "gemini-2.5-flash" || !g.stream || g.firstUser != "hi" {
		t.Errorf("gemini: %+v", g)
	}
	r := readRequest(adapters.OpenAIResponses, "/v1/responses", []byte(`{"model":"m","stream":true,"previous_response_id":"resp_1","tools":[{"type":"function","name":"f","parameters":{"type":"object"}}]}`))
	if r.model != "m" || !r.stream || r.previousID != "resp_1" || string(r.toolSchemas["f"]) != `{"type":"object"}` || !strings.HasPrefix(string(r.tools), "[") {
		t.Errorf("responses: %+v", r)
	}
	u := readRequest("", "/x", []byte(`{"model":"m","stream":true}`))
	if u.model != "" || u.stream || u.toolSchemas == nil {
		t.Errorf("an unclassified request: %+v", u)
	}
}
