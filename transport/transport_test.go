package transport_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/transport"
)

func TestProviderResolution(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk-x", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/"}
	get := func(k string) string { return env[k] }
	p, err := transport.ResolveProvider("openai", "", get)
	if err != nil || p.URL("/v1/responses") != "https://api.openai.com/v1/responses" {
		t.Fatalf("%v %s", err, p.URL("/v1/responses"))
	}
	if _, err := transport.ResolveProvider("anthropic", "", get); err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Fatalf("missing key: %v", err)
	}
	env["ANTHROPIC_API_KEY"] = "k"
	p, _ = transport.ResolveProvider("anthropic", "", get)
	if p.URL("/v1/messages") != "http://127.0.0.1:9/v1/messages" {
		t.Fatalf("anthropic URL %s", p.URL("/v1/messages"))
	}
	p = transport.Provider{BaseURL: "http://127.0.0.1:8787/v1"}
	if p.URL("/v1/chat/completions") != "http://127.0.0.1:8787/v1/chat/completions" {
		t.Fatalf("OpenAI-style base: %s", p.URL("/v1/chat/completions"))
	}
	if _, err := transport.ResolveProvider("compatible", "", get); err == nil {
		t.Fatal("compatible without a base URL accepted")
	}
	h := http.Header{}
	transport.Provider{Key: "g"}.Authorize(h, adapters.Gemini)
	if h.Get("x-goog-api-key") != "g" || h.Get("Authorization") != "" {
		t.Fatalf("gemini auth %v", h)
	}
}

func TestClassify(t *testing.T) {
	cases := map[int]transport.ErrorClass{400: transport.ClassRequest, 422: transport.ClassRequest, 401: transport.ClassConfig, 403: transport.ClassConfig,
		404: transport.ClassNotFound, 429: transport.ClassRetryable, 500: transport.ClassRetryable, 529: transport.ClassRetryable, 408: transport.ClassRetryable}
	for status, want := range cases {
		if got := transport.Classify(status); got != want {
			t.Errorf("%d: %s, want %s", status, got, want)
		}
	}
}

// The keys, base URLs and key headers read from the descriptors are the
// providers' own.
func TestProviderTablesFromDescriptors(t *testing.T) {
	for name, want := range map[string][2]string{
		"openai":     {"OPENAI_API_KEY", "https://api.openai.com/v1"},
		"anthropic":  {"ANTHROPIC_API_KEY", "https://api.anthropic.com"},
		"deepseek":   {"DEEPSEEK_API_KEY", "https://api.deepseek.com"},
		"gemini":     {"GEMINI_API_KEY", "https://generativelanguage.googleapis.com"},
		"compatible": {"COMPATIBLE_API_KEY", ""},
	} {
		if got := transport.KeyEnv(name); got != want[0] {
			t.Errorf("%s: key from %s, want %s", name, got, want[0])
		}
		if want[1] == "" {
			continue
		}
		p, err := transport.ResolveProvider(name, "", func(k string) string { return map[string]string{want[0]: "k"}[k] })
		if err != nil || p.BaseURL != want[1] {
			t.Errorf("%s: base %q (%v), want %s", name, p.BaseURL, err, want[1])
		}
	}
	for protocol, want := range map[string][2]string{
		adapters.OpenAIResponses: {"Authorization", "Bearer k"}, adapters.OpenAIChat: {"Authorization", "Bearer k"},
		adapters.DeepSeekChat: {"Authorization", "Bearer k"}, adapters.AnthropicMessages: {"X-Api-Key", "k"},
		adapters.Gemini: {"X-Goog-Api-Key", "k"}, adapters.GeminiInteractions: {"X-Goog-Api-Key", "k"},
	} {
		h := http.Header{}
		transport.Provider{Key: "k"}.Authorize(h, protocol)
		if len(h) != 1 || h.Get(want[0]) != want[1] {
			t.Errorf("%s: headers %v, want %s: %s", protocol, h, want[0], want[1])
		}
	}
}
