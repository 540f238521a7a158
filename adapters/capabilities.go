package adapters

import (
	"fmt"
	"sort"
	"strings"
)

// Protocol names (the wire formats).
const (
	OpenAIResponses   = "openai-responses"
	OpenAIChat        = "openai-chat"
	AnthropicMessages = "anthropic-messages"
	Gemini            = "gemini"
	DeepSeekChat      = "deepseek-chat"
	ClaudeCode        = "claude-code" // decode only
)

// GeminiInteractions is Google's Interactions API (POST /v1beta/interactions).
const GeminiInteractions = "gemini-interactions"

// Provider names (who answers).
const (
	ProviderSim        = "sim"
	ProviderOpenAI     = "openai"
	ProviderAnthropic  = "anthropic"
	ProviderDeepSeek   = "deepseek"
	ProviderGemini     = "gemini"
	ProviderCompatible = "compatible"
)

// NativeProtocol is the wire format a provider is known by, used when no
// protocol is named: the simulator and OpenAI answer openai-responses,
// compatible servers (Ollama, vLLM, gateways) openai-chat. "" for an
// unknown provider.
func NativeProtocol(provider string) string {
	switch provider {
	case "", ProviderSim, ProviderOpenAI:
		return OpenAIResponses
	case ProviderAnthropic:
		return AnthropicMessages
	case ProviderGemini:
		return Gemini
	case ProviderDeepSeek:
		return DeepSeekChat
	case ProviderCompatible:
		return OpenAIChat
	}
	return ""
}

// DeveloperPlacement says what a protocol does with a developer source.
type DeveloperPlacement string

// Developer placements.
const (
	DeveloperNative   DeveloperPlacement = "native"    // a developer-role message
	DeveloperAsSystem DeveloperPlacement = "as-system" // appended to the system field
	DeveloperAsUser   DeveloperPlacement = "as-user"   // sent as developer, read as user (DeepSeek)
)

// Capabilities is what one provider accepts on one wire format. Encoders
// consult it so that a request never loses a part silently: what cannot be
// carried is either an error or a recorded degradation.
type Capabilities struct {
	Provider string
	Protocol string
	// SystemField is where system rules go, for the teaching view.
	SystemField string
	Developer   DeveloperPlacement
	// ForcedToolChoice: "required" and a named tool can be forced.
	ForcedToolChoice bool
	// ParallelControl: parallel_tool_calls (or its equivalent) is honoured.
	ParallelControl bool
	// StrictSchemas: tool and output schemas can be enforced strictly.
	StrictSchemas bool
	// StructuredOutput is the strongest output contract: json_schema,
	// json_object, or "" for none.
	StructuredOutput OutputMode
	// ServerState: the provider keeps responses (previous_response_id).
	ServerState bool
	// ReasoningItems: reasoning comes back as items that must be replayed.
	ReasoningItems bool
	// Notes are documented limits shown with the table.
	Notes []string
}

var capabilityTable = map[[2]string]Capabilities{}

func init() {
	responses := Capabilities{Protocol: OpenAIResponses, SystemField: "instructions", Developer: DeveloperNative,
		ForcedToolChoice: true, ParallelControl: true, StrictSchemas: true, StructuredOutput: OutputJSONSchema,
		ServerState: true, ReasoningItems: true}
	chat := Capabilities{Protocol: OpenAIChat, SystemField: "messages[0] (role system)", Developer: DeveloperNative,
		ForcedToolChoice: true, ParallelControl: true, StrictSchemas: true, StructuredOutput: OutputJSONSchema}
	anthropic := Capabilities{Protocol: AnthropicMessages, SystemField: "system", Developer: DeveloperAsSystem,
		ForcedToolChoice: true, ParallelControl: true, StrictSchemas: true, StructuredOutput: OutputJSONSchema,
		ReasoningItems: true}
	gemini := Capabilities{Protocol: Gemini, SystemField: "systemInstruction", Developer: DeveloperAsSystem,
		ForcedToolChoice: true, ParallelControl: false, StrictSchemas: false, StructuredOutput: OutputJSONSchema,
		ReasoningItems: true, Notes: []string{"no strict flag: schemas are constrained decoding hints",
			"no parallel_tool_calls switch"}}
	interactions := Capabilities{Protocol: GeminiInteractions, SystemField: "system_instruction", Developer: DeveloperAsSystem,
		ForcedToolChoice: true, ParallelControl: false, StrictSchemas: false, StructuredOutput: OutputJSONSchema,
		ServerState: true, ReasoningItems: true, Notes: []string{"no strict flag: schemas are constrained decoding hints",
			"no parallel tool calls switch", "interactions are stored by default (store: true)"}}
	deepseekChat := Capabilities{Protocol: DeepSeekChat, SystemField: "messages[0] (role system)", Developer: DeveloperAsUser,
		ForcedToolChoice: true, ParallelControl: false, StrictSchemas: false, StructuredOutput: OutputJSON,
		ReasoningItems: true, Notes: []string{"response_format supports json_object only",
			"strict tool schemas only on the beta endpoint", "reasoning_content of tool-call turns must be passed back"}}

	for _, p := range []Capabilities{responses, chat, anthropic, gemini, interactions, deepseekChat} {
		c := p
		c.Provider = ProviderSim
		add(c)
	}
	add(with(responses, ProviderOpenAI))
	add(with(chat, ProviderOpenAI))
	add(with(anthropic, ProviderAnthropic))
	add(with(gemini, ProviderGemini))
	add(with(interactions, ProviderGemini))
	add(with(deepseekChat, ProviderDeepSeek))
	add(with(chat, ProviderCompatible, func(c *Capabilities) {
		c.Notes = []string{"what a compatible server honours varies: strict and response_format may be ignored"}
	}))
	add(with(responses, ProviderCompatible, func(c *Capabilities) {
		c.Notes = []string{"what a compatible server honours varies"}
	}))
	// DeepSeek's Responses- and Anthropic-format endpoints: the same wire
	// formats with DeepSeek's documented limits.
	add(with(responses, ProviderDeepSeek, func(c *Capabilities) {
		c.Developer = DeveloperAsUser
		c.ServerState = false
		c.ParallelControl = false
		c.Notes = []string{"stateless: store is always false, previous_response_id unsupported",
			"developer messages are treated as user", "parallel_tool_calls is ignored"}
	}))
	add(with(anthropic, ProviderDeepSeek, func(c *Capabilities) {
		c.ParallelControl = false
		c.StructuredOutput = ""
		c.Notes = []string{"disable_parallel_tool_use is ignored", "output_config.format is not supported"}
	}))
}

func with(c Capabilities, provider string, edit ...func(*Capabilities)) Capabilities {
	c.Provider = provider
	for _, e := range edit {
		e(&c)
	}
	return c
}

func add(c Capabilities) { capabilityTable[[2]string{c.Provider, c.Protocol}] = c }

// CapabilitiesFor returns what provider accepts on protocol, or an error
// naming the protocols the provider does speak.
func CapabilitiesFor(provider, protocol string) (Capabilities, error) {
	if provider == "" {
		provider = ProviderSim
	}
	if c, ok := capabilityTable[[2]string{provider, protocol}]; ok {
		return c, nil
	}
	var speaks []string
	for k := range capabilityTable {
		if k[0] == provider {
			speaks = append(speaks, k[1])
		}
	}
	if len(speaks) == 0 {
		return Capabilities{}, fmt.Errorf("unknown provider %q (want sim, openai, anthropic, deepseek, gemini or compatible)", provider)
	}
	sort.Strings(speaks)
	return Capabilities{}, fmt.Errorf("provider %s does not speak %s (it speaks %s)", provider, protocol, strings.Join(speaks, ", "))
}

// AllCapabilities lists the table in a stable order.
func AllCapabilities() []Capabilities {
	out := make([]Capabilities, 0, len(capabilityTable))
	for _, c := range capabilityTable {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Provider != out[j].Provider {
			return out[i].Provider < out[j].Provider
		}
		return out[i].Protocol < out[j].Protocol
	})
	return out
}

// who names the provider and protocol for messages: "gemini" when the
// simulator or the provider of the same name speaks it, else "deepseek on
// openai-responses".
func (c Capabilities) who() string {
	if c.Provider == ProviderSim || c.Provider == c.Protocol || c.Provider+"-chat" == c.Protocol || c.Provider+"-interactions" == c.Protocol {
		return c.Protocol
	}
	return c.Provider + " on " + c.Protocol
}

// Check reports what req asks that these capabilities cannot carry at all
// (an error), and what they can carry only in a degraded form (returned
// as notes to record on the encoded request).
func (c Capabilities) Check(req *Request) (degradations []string, err error) {
	if req.History == HistoryPreviousResponse {
		if c.Protocol != OpenAIResponses && c.Protocol != GeminiInteractions {
			return nil, fmt.Errorf("history mode previous-response-id exists only in openai-responses and gemini-interactions, not %s", c.Protocol)
		}
		if !c.ServerState {
			return nil, fmt.Errorf("%s on %s is stateless: previous_response_id is not supported, use history full", c.Provider, c.Protocol)
		}
		if req.Store != nil && !*req.Store {
			return nil, fmt.Errorf("chaining on the previous response id needs stored responses, but store is false")
		}
	}
	if (req.Choice.Mode == ToolChoiceRequired || req.Choice.Mode == ToolChoiceNamed) && !c.ForcedToolChoice {
		return nil, fmt.Errorf("%s on %s cannot force a tool choice", c.Provider, c.Protocol)
	}
	if req.Choice.Mode == ToolChoiceNamed {
		found := false
		for _, t := range req.Tools {
			found = found || t.Name == req.Choice.Name
		}
		if !found {
			return nil, fmt.Errorf("tool_choice names %q, which is not among the tools", req.Choice.Name)
		}
	}
	for _, s := range req.Sources {
		if s.Role == RoleDeveloper {
			switch c.Developer {
			case DeveloperAsSystem:
				degradations = append(degradations, fmt.Sprintf("source %s: no developer role in %s; sent in %s", s.ID, c.Protocol, c.SystemField))
			case DeveloperAsUser:
				degradations = append(degradations, fmt.Sprintf("source %s: %s treats developer messages as user", s.ID, c.Provider))
			}
		}
	}
	strictAsked := req.Output.Strict
	for _, t := range req.Tools {
		strictAsked = strictAsked || t.Strict
	}
	if strictAsked && !c.StrictSchemas {
		degradations = append(degradations, fmt.Sprintf("%s does not enforce strict schemas; schemas sent without strict", c.who()))
	}
	switch req.Output.Mode {
	case OutputJSONSchema:
		switch c.StructuredOutput {
		case OutputJSONSchema:
		case OutputJSON:
			degradations = append(degradations, fmt.Sprintf("%s has JSON mode only: the output schema is sent as text in the system prompt with json_object mode", c.who()))
		default:
			degradations = append(degradations, fmt.Sprintf("%s has no structured output: the output schema is sent as text in the system prompt", c.who()))
		}
	case OutputJSON:
		if c.StructuredOutput == "" {
			degradations = append(degradations, fmt.Sprintf("%s has no JSON mode: the JSON requirement is stated in the system prompt", c.who()))
		}
	}
	if req.Limits.ParallelToolCalls != nil && !c.ParallelControl {
		degradations = append(degradations, fmt.Sprintf("%s ignores the parallel tool calls switch", c.who()))
	}
	if req.Store != nil && *req.Store && c.Protocol == OpenAIResponses && !c.ServerState {
		degradations = append(degradations, fmt.Sprintf("%s keeps no responses: store sent as false", c.Provider))
	}
	return degradations, nil
}
