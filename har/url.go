package har

import (
	"net/url"
	"strings"

	"github.com/modelwire/modelwire/adapters"
)

// What a HAR entry's URL says of the exchange: the protocol by its path,
// the provider by its host, the base URL.

// protocolOfPath recognises the six protocols by the request path (a
// gateway may put a prefix before it).
func protocolOfPath(u *url.URL) string {
	p := strings.TrimRight(u.Path, "/")
	switch {
	case strings.HasSuffix(p, "/v1/responses"):
		return adapters.OpenAIResponses
	case strings.HasSuffix(p, "/v1/chat/completions"):
		if strings.Contains(u.Hostname(), "deepseek") {
			return adapters.DeepSeekChat
		}
		return adapters.OpenAIChat
	case strings.HasSuffix(p, "/chat/completions"):
		return adapters.DeepSeekChat
	case strings.HasSuffix(p, "/v1/messages"):
		return adapters.AnthropicMessages
	case strings.HasSuffix(p, "/v1beta/interactions"):
		return adapters.GeminiInteractions
	case strings.Contains(p, "/models/") && (strings.HasSuffix(p, ":generateContent") || strings.HasSuffix(p, ":streamGenerateContent")):
		return adapters.Gemini
	}
	return ""
}

func providerOfHost(host string) string {
	switch {
	case strings.HasSuffix(host, "openai.com"):
		return adapters.ProviderOpenAI
	case strings.HasSuffix(host, "anthropic.com"):
		return adapters.ProviderAnthropic
	case strings.HasSuffix(host, "deepseek.com"):
		return adapters.ProviderDeepSeek
	case strings.HasSuffix(host, "googleapis.com"):
		return adapters.ProviderGemini
	}
	return adapters.ProviderCompatible
}

// baseURLOf is the base URL as the official SDKs mean it: OpenAI's
// includes /v1, the others' do not.
func baseURLOf(u *url.URL, protocol string) string {
	p := u.Path
	cut := func(suffix string) string {
		if i := strings.LastIndex(p, suffix); i >= 0 {
			return p[:i]
		}
		return p
	}
	switch protocol {
	case adapters.OpenAIResponses:
		p = cut("/responses")
	case adapters.OpenAIChat, adapters.DeepSeekChat:
		p = cut("/chat/completions")
		if protocol == adapters.DeepSeekChat {
			p = strings.TrimSuffix(p, "/v1")
		}
	case adapters.AnthropicMessages:
		p = cut("/v1/messages")
	case adapters.Gemini, adapters.GeminiInteractions:
		if i := strings.Index(p, "/v1beta/"); i >= 0 {
			p = p[:i]
		} else if i := strings.Index(p, "/v1/"); i >= 0 {
			p = p[:i]
		}
	}
	return u.Scheme + "://" + u.Host + p
}
