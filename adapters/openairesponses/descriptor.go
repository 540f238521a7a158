package openairesponses

import (
	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
)

// Descriptor is the Responses API's entry in the registry.
var Descriptor = adapters.Descriptor{
	Name:     adapters.OpenAIResponses,
	New:      New,
	Provider: adapters.ProviderOpenAI,
	Endpoint: adapters.Endpoint{Host: "https://api.openai.com", BaseURL: "https://api.openai.com/v1", BaseURLEnv: "OPENAI_BASE_URL",
		Paths: []string{"/v1/responses"}, StreamField: "stream"},
	Auth:         adapters.OpenAIAuth,
	ChainField:   "previous_response_id",
	HistoryField: "input",
	Models:       models,
	Batch:        adapters.OpenAIBatch,
	SDK: adapters.SDK{Client: "openai", Call: "client.responses.create", Go: "openai-go Responses.NewStreaming",
		Known: []string{"model", "input", "instructions", "tools", "tool_choice", "stream", "text", "max_output_tokens", "parallel_tool_calls",
			"temperature", "top_p", "reasoning", "store", "previous_response_id", "include", "metadata", "truncation", "user"}},
	Trace:        adapters.Trace{ProviderName: "openai", Operation: "chat"},
	CallIDPrefix: "call_",
	ReadContract: readContract,
	ServerTiming: adapters.OpenAIServerTiming,
	RateLimits:   adapters.OpenAIRateLimits,
	Reasoning:    []string{"reasoning.effort"},
}

// models is OpenAI's GET /v1/models, which Chat Completions answers (the
// simulator always has: its headers and errors are Chat's).
var models = func() adapters.ModelsEndpoint {
	m := adapters.OpenAIModels
	m.Defers = true
	return m
}()

func readContract(root gjson.Result, d *adapters.Declared) {
	for _, t := range root.Get("tools").Array() {
		if t.Get("type").String() == "function" {
			d.AddTool(t.Get("name").String(), t.Get("parameters"))
		}
	}
	if f := root.Get("text.format"); f.Get("type").String() == "json_schema" {
		d.Schema, d.SchemaName = adapters.RawOf(f.Get("schema")), f.Get("name").String()
	}
}
