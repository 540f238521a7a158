package openaichat

import (
	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
)

// Descriptor is Chat Completions' entry in the registry.
var Descriptor = adapters.Descriptor{
	Name:     adapters.OpenAIChat,
	New:      New,
	Provider: adapters.ProviderOpenAI,
	Endpoint: adapters.Endpoint{Host: "https://api.openai.com", BaseURL: "https://api.openai.com/v1", BaseURLEnv: "OPENAI_BASE_URL",
		Paths: []string{"/v1/chat/completions"}, StreamField: "stream", SSEIDs: true},
	Auth:         adapters.OpenAIAuth,
	HistoryField: "messages",
	Models:       adapters.OpenAIModels,
	Batch:        adapters.OpenAIBatch,
	SDK: adapters.SDK{Client: "openai", Call: "client.chat.completions.create", Go: "openai-go Chat.Completions.NewStreaming",
		Known: []string{"model", "messages", "tools", "tool_choice", "stream", "stream_options", "response_format", "max_completion_tokens",
			"max_tokens", "parallel_tool_calls", "temperature", "top_p", "reasoning_effort", "seed", "stop", "n", "metadata", "store", "user",
			"logprobs", "top_logprobs", "presence_penalty", "frequency_penalty"}},
	Trace:        adapters.Trace{ProviderName: "openai", Operation: "chat"},
	CallIDPrefix: "call_",
	ReadContract: readContract,
	ServerTiming: adapters.OpenAIServerTiming,
	RateLimits:   adapters.OpenAIRateLimits,
	Reasoning:    []string{"reasoning_effort"},
}

// DeepSeekDescriptor is DeepSeek's dialect of Chat Completions: rooted at
// the bare host (/v1 accepted too, and the simulator's own alias), and it
// claims /v1/chat/completions on a DeepSeek host.
var DeepSeekDescriptor = adapters.Descriptor{
	Name:     adapters.DeepSeekChat,
	New:      NewDeepSeek,
	Provider: adapters.ProviderDeepSeek,
	Endpoint: adapters.Endpoint{Host: "https://api.deepseek.com", BaseURL: "https://api.deepseek.com", BaseURLEnv: "DEEPSEEK_BASE_URL",
		Paths:    []string{"/chat/completions", "/v1/chat/completions", "/v1/deepseek/chat/completions"},
		HostHint: "deepseek", StreamField: "stream", SSEIDs: true},
	Auth: adapters.Auth{Env: "DEEPSEEK_API_KEY", Bearer: true,
		Missing: adapters.AuthError{Status: 401, Kind: "authentication_error", Message: "Authentication Fails (auth header format should be Bearer sk-...)"},
		Wrong:   adapters.AuthError{Status: 401, Kind: "authentication_error", Message: "Authentication Fails, Your api key: **** is invalid"}},
	HistoryField: "messages",
	Models:       adapters.ModelsEndpoint{Path: "/models", Shape: adapters.ModelsShapeOpenAI, OwnedBy: "deepseek", NotFound: adapters.OpenAIModels.NotFound},
	SDK:          adapters.SDK{Client: "openai", Call: "client.chat.completions.create", Go: "openai-go Chat.Completions.NewStreaming", Known: Descriptor.SDK.Known},
	Trace:        adapters.Trace{ProviderName: "deepseek", Operation: "chat"},
	CallIDPrefix: "call_",
	ReadContract: readContract,
	// Thinking is on unless "thinking" turns it off; the effort is OpenAI's
	// member (DS-DOC-THINK).
	Reasoning: []string{"thinking.type", "reasoning_effort"},
}

func readContract(root gjson.Result, d *adapters.Declared) {
	for _, t := range root.Get("tools").Array() {
		if f := t.Get("function"); f.Exists() {
			d.AddTool(f.Get("name").String(), f.Get("parameters"))
		}
	}
	if rf := root.Get("response_format"); rf.Get("type").String() == "json_schema" {
		d.Schema, d.SchemaName = adapters.RawOf(rf.Get("json_schema.schema")), rf.Get("json_schema.name").String()
	}
}
