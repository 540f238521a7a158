// Package registry names every wire-format adapter, so commands can look a
// protocol up by its contract name without importing each adapter.
package registry

import (
	"fmt"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/anthropic"
	"github.com/modelwire/modelwire/adapters/claudecode"
	"github.com/modelwire/modelwire/adapters/gemini"
	"github.com/modelwire/modelwire/adapters/geminiinteractions"
	"github.com/modelwire/modelwire/adapters/openaichat"
	"github.com/modelwire/modelwire/adapters/openairesponses"
)

// Protocols are the six request/response wire formats, in the order the
// UI shows them.
var Protocols = []string{adapters.OpenAIResponses, adapters.OpenAIChat, adapters.AnthropicMessages, adapters.Gemini, adapters.GeminiInteractions, adapters.DeepSeekChat}

// Lookup returns the adapter for a protocol name. claude-code is accepted
// too; it can only decode.
func Lookup(name string) (adapters.Protocol, error) {
	switch name {
	case adapters.OpenAIResponses:
		return openairesponses.New(), nil
	case adapters.OpenAIChat:
		return openaichat.New(), nil
	case adapters.DeepSeekChat:
		return openaichat.NewDeepSeek(), nil
	case adapters.AnthropicMessages:
		return anthropic.New(), nil
	case adapters.Gemini:
		return gemini.New(), nil
	case adapters.GeminiInteractions:
		return geminiinteractions.New(), nil
	case adapters.ClaudeCode:
		return claudecode.New(), nil
	}
	return nil, fmt.Errorf("unknown protocol %q (want %s or %s)", name, strings.Join(Protocols, ", "), adapters.ClaudeCode)
}
