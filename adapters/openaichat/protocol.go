// Package openaichat is the OpenAI Chat Completions wire format, both
// directions, and its DeepSeek dialect (protocols.md §2 and §5).
//
// One implementation serves both contract protocols: "openai-chat"
// (POST /v1/chat/completions) and "deepseek-chat" (POST /chat/completions,
// with DeepSeek's top-level `thinking` switch, `reasoning_content` in the
// stream and in history, `max_tokens`, and JSON mode instead of
// json_schema). Everything that differs is decided by the dialect flag in
// one place; the chunk decoder is the same for both, since DeepSeek's
// stream is OpenAI's plus `reasoning_content` and a different place for
// usage.
package openaichat

import (
	"net/http"

	"github.com/modelwire/modelwire/adapters"
)

// protocol is one dialect of Chat Completions.
type protocol struct {
	deepseek bool
}

var _ adapters.Protocol = protocol{}

// New returns the "openai-chat" protocol.
func New() adapters.Protocol { return protocol{} }

// NewDeepSeek returns the "deepseek-chat" protocol: Chat Completions as
// DeepSeek documents it.
func NewDeepSeek() adapters.Protocol { return protocol{deepseek: true} }

// Name is the protocol's contract name.
func (p protocol) Name() string {
	if p.deepseek {
		return adapters.DeepSeekChat
	}
	return adapters.OpenAIChat
}

// Framing: Chat streams are data-only SSE.
func (p protocol) Framing() adapters.Framing { return adapters.FramingSSE }

// path is the request path as the server sees it. DeepSeek's
// OpenAI-compatible surface is rooted at the bare host (its base URL has
// no /v1), so its path has none either.
func (p protocol) path() string {
	if p.deepseek {
		return "/chat/completions"
	}
	return "/v1/chat/completions"
}

// DecodeError reads an error body. OpenAI and DeepSeek share one shape:
// {"error":{"message","type","param","code"}} (protocols.md §6.1).
func (p protocol) DecodeError(status int, h http.Header, body []byte) *adapters.APIError {
	return adapters.GenericError(status, h, body)
}
