package anthropic

import (
	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
)

// Descriptor is the Messages API's entry in the registry.
var Descriptor = adapters.Descriptor{
	Name:     adapters.AnthropicMessages,
	New:      New,
	Provider: adapters.ProviderAnthropic,
	Endpoint: adapters.Endpoint{Host: "https://api.anthropic.com", BaseURL: "https://api.anthropic.com", BaseURLEnv: "ANTHROPIC_BASE_URL",
		Paths: []string{"/v1/messages"}, StreamField: "stream", SSEIDs: true},
	// Anthropic also takes an OAuth bearer token.
	Auth: adapters.Auth{Env: "ANTHROPIC_API_KEY", Header: "x-api-key", Bearer: true,
		Missing: adapters.AuthError{Status: 401, Kind: "authentication_error", Message: "x-api-key header is required"},
		Wrong:   adapters.AuthError{Status: 401, Kind: "authentication_error", Message: "invalid x-api-key"}},
	HistoryField: "messages",
	// POST /v1/messages/count_tokens takes the message fields without the
	// generation ones.
	Count: &adapters.CountEndpoint{Path: "/v1/messages/count_tokens", Keep: []string{"model", "messages", "system", "tools", "tool_choice", "thinking"},
		Needs: []string{"messages"}, Answer: "input_tokens", Missing: "messages: Field required", NeedsList: true},
	Models: adapters.ModelsEndpoint{Path: "/v1/models", Header: "anthropic-version", Shape: adapters.ModelsShapeAnthropic, NotFound: "model: {id}"},
	SDK: adapters.SDK{Client: "anthropic", Call: "client.messages.create", Go: "anthropic-sdk-go Messages.NewStreaming",
		Known: []string{"model", "messages", "system", "tools", "tool_choice", "max_tokens", "stream", "temperature", "top_p", "top_k",
			"thinking", "metadata", "stop_sequences"}},
	Trace:        adapters.Trace{ProviderName: "anthropic", Operation: "chat"},
	Faults:       []string{"overloaded", "pause-turn"},
	CallIDPrefix: "toolu_",
	ReadContract: readContract,
	Reasoning:    []string{"thinking.type", "thinking.budget_tokens", "output_config.effort"},
	// Anthropic reports no processing time of its own.
	RateLimits: adapters.RateLimitNames{
		RequestsLimit: "anthropic-ratelimit-requests-limit", RequestsRemaining: "anthropic-ratelimit-requests-remaining",
		RequestsReset: "anthropic-ratelimit-requests-reset", TokensLimit: "anthropic-ratelimit-tokens-limit",
		TokensRemaining: "anthropic-ratelimit-tokens-remaining", TokensReset: "anthropic-ratelimit-tokens-reset", ResetAt: true},
}

func readContract(root gjson.Result, d *adapters.Declared) {
	for _, t := range root.Get("tools").Array() {
		if s := t.Get("input_schema"); s.Exists() {
			d.AddTool(t.Get("name").String(), s)
		}
	}
	for _, p := range []string{"output_config.format", "output_format"} {
		if f := root.Get(p); f.Get("type").String() == "json_schema" {
			d.Schema, d.SchemaName = adapters.RawOf(f.Get("schema")), p
			break
		}
	}
}
