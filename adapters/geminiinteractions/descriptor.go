package geminiinteractions

import (
	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
)

// Descriptor is the Interactions API's entry in the registry.
var Descriptor = adapters.Descriptor{
	Name:     adapters.GeminiInteractions,
	New:      New,
	Provider: adapters.ProviderGemini,
	Endpoint: adapters.Endpoint{Host: adapters.GoogleHost, BaseURL: adapters.GoogleHost, BaseURLEnv: "GOOGLE_GEMINI_BASE_URL",
		Paths: []string{"/v1beta/interactions"}, StreamField: "stream", SSEIDs: true},
	Auth:         adapters.GoogleAuth("API key not valid. Please pass a valid API key."),
	ChainField:   "previous_interaction_id",
	HistoryField: "input",
	Models:       adapters.GeminiModels,
	SDK:          adapters.SDK{Go: "genai Interactions"},
	Trace:        adapters.Trace{ProviderName: "gcp.gemini", Operation: "generate_content"},
	CallIDPrefix: "call_",
	ReadContract: readContract,
	Reasoning:    []string{"generation_config.thinking_level"},
}

func readContract(root gjson.Result, d *adapters.Declared) {
	for _, t := range root.Get("tools").Array() {
		if t.Get("type").String() == "function" {
			d.AddTool(t.Get("name").String(), t.Get("parameters"))
		}
	}
	// response_format is one format or a list of them (text, image…).
	formats := root.Get("response_format")
	if !formats.IsArray() {
		formats = gjson.Parse("[" + formats.Raw + "]")
	}
	for _, f := range formats.Array() {
		if f.Get("type").String() == "text" && f.Get("schema").Exists() {
			d.Schema, d.SchemaName = adapters.RawOf(f.Get("schema")), "response_format"
		}
	}
}
