package proxy

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/transport"
)

// classify names the protocol spoken at a request's path ("" when the
// request is not one modelwire decodes: it is forwarded untouched and
// recorded as unknown), as the registry routes it. upstream is the
// --upstream base URL ("" for the per-path defaults): its host settles a
// path two protocols share (a DeepSeek host turns /v1/chat/completions
// into DeepSeek's dialect, whose decoder also reads reasoning_content).
func classify(method, path, upstream string) string {
	d, ok := registry.Route(method, path, hostOf(upstream))
	if !ok {
		return ""
	}
	return d.Name
}

// defaultUpstream is the provider host a request goes to without
// --upstream: the protocol's own, else guessed from the path and the
// headers the providers' SDKs send. "" means there is no sensible guess.
func defaultUpstream(protocol, path string, h http.Header) string {
	if d, ok := registry.Describe(protocol); ok {
		return d.Endpoint.Host
	}
	switch {
	case h.Get("Anthropic-Version") != "" || strings.HasPrefix(path, "/v1/messages") || path == "/v1/complete":
		return providerHost(adapters.ProviderAnthropic)
	case h.Get("X-Goog-Api-Key") != "" || strings.HasPrefix(path, "/v1beta/") || strings.HasPrefix(path, "/v1alpha/") || strings.HasPrefix(path, "/upload/"):
		return providerHost(adapters.ProviderGemini)
	case strings.HasPrefix(path, "/v1/"):
		return providerHost(adapters.ProviderOpenAI)
	}
	return ""
}

// providerHost is a provider's own host, as its protocols' descriptors
// name it ("" for a provider with none).
func providerHost(provider string) string {
	for _, d := range registry.OfProvider(provider) {
		return d.Endpoint.Host
	}
	return ""
}

// target is the upstream URL of a request: the base joined with the path
// (a base ending in /v1 absorbs the path's /v1, as the SDKs' base URLs
// do) and the query, unchanged.
func target(base string, u *url.URL) string {
	t := transport.Provider{BaseURL: base}.URL(u.EscapedPath())
	if u.RawQuery != "" {
		t += "?" + u.RawQuery
	}
	return t
}

// providerOf names who answers at an upstream, for the session list.
func providerOf(upstream string) string {
	h := hostOf(upstream)
	for _, d := range registry.All() {
		if h != "" && (hostOf(d.Endpoint.Host) == h || (d.Endpoint.HostHint != "" && strings.Contains(h, d.Endpoint.HostHint))) {
			return d.Provider
		}
	}
	return adapters.ProviderCompatible
}

// hostPort is a base URL's host and port, for titles.
func hostPort(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	return u.Host
}

func hostOf(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

// hopHeaders are the hop-by-hop headers (RFC 9110 §7.6.1): they belong to
// one connection and are never forwarded. Expect is answered by this
// server (the body is read before it is forwarded).
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade", "Expect"}

// copyHeader copies src into dst without the hop-by-hop headers (and those
// the Connection header names).
func copyHeader(dst, src http.Header) {
	drop := map[string]bool{}
	for _, v := range src.Values("Connection") {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				drop[http.CanonicalHeaderKey(f)] = true
			}
		}
	}
	for _, h := range hopHeaders {
		drop[h] = true
	}
	for k, vs := range src {
		if drop[http.CanonicalHeaderKey(k)] {
			continue
		}
		dst[k] = append([]string(nil), vs...)
	}
}
