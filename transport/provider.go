package transport

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/modelwire/modelwire/adapters"
)

// Provider holds what a real provider needs: where it is and its key.
type Provider struct {
	Name    string
	BaseURL string
	Key     string
}

// defaultBaseURL is each provider's base URL as its official SDK means it.
var defaultBaseURL = map[string]string{
	adapters.ProviderOpenAI:    "https://api.openai.com/v1",
	adapters.ProviderAnthropic: "https://api.anthropic.com",
	adapters.ProviderDeepSeek:  "https://api.deepseek.com",
	adapters.ProviderGemini:    "https://generativelanguage.googleapis.com",
}

var keyEnv = map[string]string{
	adapters.ProviderOpenAI:     "OPENAI_API_KEY",
	adapters.ProviderAnthropic:  "ANTHROPIC_API_KEY",
	adapters.ProviderDeepSeek:   "DEEPSEEK_API_KEY",
	adapters.ProviderGemini:     "GEMINI_API_KEY",
	adapters.ProviderCompatible: "COMPATIBLE_API_KEY",
}

// KeyEnv is the environment variable a provider's key is read from.
func KeyEnv(provider string) string { return keyEnv[provider] }

// ResolveProvider fills a provider from flags and the environment: the
// base URL from the flag, else <PROVIDER>_BASE_URL, else the default; the
// key from <PROVIDER>_API_KEY.
func ResolveProvider(name, baseURL string, getenv func(string) string) (Provider, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	p := Provider{Name: name, BaseURL: baseURL}
	if name == adapters.ProviderSim {
		if p.BaseURL == "" {
			return p, errors.New("the simulator's base URL is not set")
		}
		p.Key = "sim-key"
		return p, nil
	}
	env, ok := keyEnv[name]
	if !ok {
		return p, fmt.Errorf("unknown provider %q (want sim, openai, anthropic, deepseek, gemini or compatible)", name)
	}
	if p.BaseURL == "" {
		p.BaseURL = getenv(strings.ToUpper(name) + "_BASE_URL")
	}
	if p.BaseURL == "" {
		p.BaseURL = defaultBaseURL[name]
	}
	if p.BaseURL == "" {
		return p, fmt.Errorf("provider compatible needs a base URL: --base-url or COMPATIBLE_BASE_URL (e.g. http://127.0.0.1:11434/v1)")
	}
	if _, err := url.Parse(p.BaseURL); err != nil {
		return p, fmt.Errorf("bad base URL %q: %v", p.BaseURL, err)
	}
	p.Key = getenv(env)
	if p.Key == "" && name != adapters.ProviderCompatible {
		return p, fmt.Errorf("provider %s needs %s in the environment", name, env)
	}
	return p, nil
}

// URL joins the base URL and an encoded request's path. A base URL that
// already ends in /v1 (OpenAI's convention) absorbs the path's /v1.
func (p Provider) URL(path string) string {
	base := strings.TrimRight(p.BaseURL, "/")
	if strings.HasSuffix(base, "/v1") && strings.HasPrefix(path, "/v1/") {
		path = strings.TrimPrefix(path, "/v1")
	}
	return base + path
}

// Authorize adds the key in the header the protocol uses.
func (p Provider) Authorize(h http.Header, protocol string) {
	if p.Key == "" {
		return
	}
	switch protocol {
	case adapters.AnthropicMessages:
		h.Set("x-api-key", p.Key)
	case adapters.Gemini, adapters.GeminiInteractions:
		h.Set("x-goog-api-key", p.Key)
	default:
		h.Set("Authorization", "Bearer "+p.Key)
	}
}
