package proxy

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/transport"
)

// The providers' own hosts: where a request goes when no --upstream is set.
const (
	OpenAIUpstream    = "https://api.openai.com"
	AnthropicUpstream = "https://api.anthropic.com"
	GeminiUpstream    = "https://generativelanguage.googleapis.com"
	DeepSeekUpstream  = "https://api.deepseek.com"
)

// classify names the protocol spoken at a request's path ("" when the
// request is not one modelwire decodes: it is forwarded untouched and
// recorded as unknown). upstream is the --upstream base URL ("" for the
// per-path defaults): a DeepSeek host turns /v1/chat/completions into
// DeepSeek's dialect, whose decoder also reads reasoning_content.
func classify(method, path, upstream string) string {
	if method != http.MethodPost {
		return ""
	}
	switch path {
	case "/v1/responses":
		return adapters.OpenAIResponses
	case "/v1/chat/completions":
		if strings.Contains(hostOf(upstream), "deepseek") {
			return adapters.DeepSeekChat
		}
		return adapters.OpenAIChat
	case "/chat/completions":
		return adapters.DeepSeekChat
	case "/v1/messages":
		return adapters.AnthropicMessages
	case "/v1beta/interactions":
		return adapters.GeminiInteractions
	}
	if strings.HasPrefix(path, "/v1beta/models/") && (strings.HasSuffix(path, ":generateContent") || strings.HasSuffix(path, ":streamGenerateContent")) {
		return adapters.Gemini
	}
	return ""
}

// defaultUpstream is the provider host a request goes to without
// --upstream: by protocol, else guessed from the path and the headers the
// providers' SDKs send. "" means there is no sensible guess.
func defaultUpstream(protocol, path string, h http.Header) string {
	switch protocol {
	case adapters.OpenAIResponses, adapters.OpenAIChat:
		return OpenAIUpstream
	case adapters.AnthropicMessages:
		return AnthropicUpstream
	case adapters.Gemini, adapters.GeminiInteractions:
		return GeminiUpstream
	case adapters.DeepSeekChat:
		return DeepSeekUpstream
	}
	switch {
	case h.Get("Anthropic-Version") != "" || strings.HasPrefix(path, "/v1/messages") || path == "/v1/complete":
		return AnthropicUpstream
	case h.Get("X-Goog-Api-Key") != "" || strings.HasPrefix(path, "/v1beta/") || strings.HasPrefix(path, "/v1alpha/") || strings.HasPrefix(path, "/upload/"):
		return GeminiUpstream
	case strings.HasPrefix(path, "/v1/"):
		return OpenAIUpstream
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
	switch {
	case h == "api.openai.com":
		return adapters.ProviderOpenAI
	case h == "api.anthropic.com":
		return adapters.ProviderAnthropic
	case h == "generativelanguage.googleapis.com":
		return adapters.ProviderGemini
	case strings.Contains(h, "deepseek"):
		return adapters.ProviderDeepSeek
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
