package transport

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
)

// Provider holds what a real provider needs: where it is and its key.
type Provider struct {
	Name    string
	BaseURL string
	Key     string
}

// KeyEnv is the environment variable a provider's key is read from: its
// protocols' (adapters.Auth.Env); "compatible", any OpenAI-compatible
// server, has no descriptor and reads COMPATIBLE_API_KEY.
func KeyEnv(provider string) string {
	if provider == adapters.ProviderCompatible {
		return "COMPATIBLE_API_KEY"
	}
	if ds := registry.OfProvider(provider); len(ds) > 0 {
		return ds[0].Auth.Env
	}
	return ""
}

// defaultBaseURL is a provider's base URL as its official SDK means it,
// from its protocols' descriptors ("" for compatible, which has none).
func defaultBaseURL(provider string) string {
	if ds := registry.OfProvider(provider); len(ds) > 0 {
		return ds[0].Endpoint.BaseURL
	}
	return ""
}

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
	env := KeyEnv(name)
	if env == "" {
		return p, fmt.Errorf("unknown provider %q (want sim, openai, anthropic, deepseek, gemini or compatible)", name)
	}
	if p.BaseURL == "" {
		p.BaseURL = getenv(strings.ToUpper(name) + "_BASE_URL")
	}
	if p.BaseURL == "" {
		p.BaseURL = defaultBaseURL(name)
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

// Authorize adds the key in the header the protocol's provider reads
// (adapters.Auth.SendHeader): its own key header, else a bearer token.
func (p Provider) Authorize(h http.Header, protocol string) {
	if p.Key == "" {
		return
	}
	d, _ := registry.Describe(protocol)
	name, value := d.Auth.SendHeader(p.Key)
	h.Set(name, value)
}
