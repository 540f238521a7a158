package gemini

import (
	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
)

// Descriptor is generateContent's entry in the registry: the model and
// the streaming are named in the path, and a stream without alt=sse is
// one JSON array.
var Descriptor = adapters.Descriptor{
	Name:     adapters.Gemini,
	New:      New,
	Provider: adapters.ProviderGemini,
	Endpoint: adapters.Endpoint{Host: adapters.GoogleHost, BaseURL: adapters.GoogleHost, BaseURLEnv: "GOOGLE_GEMINI_BASE_URL",
		Paths:        []string{"/v1beta/models/{model}:generateContent", "/v1beta/models/{model}:streamGenerateContent"},
		StreamAction: ":streamGenerateContent", ArrayUnless: "alt=sse"},
	Auth:         adapters.GoogleAuth(""),
	HistoryField: "contents",
	// :countTokens takes the whole request as generateContentRequest.
	Count: &adapters.CountEndpoint{Path: "/v1beta/models/{model}:countTokens", Wrap: "generateContentRequest",
		Needs: []string{"contents", "generateContentRequest"}, Answer: "totalTokens", Missing: "contents or generateContentRequest is required."},
	Models: adapters.GeminiModels,
	SDK:    adapters.SDK{Go: "genai Models.GenerateContentStream"},
	Trace:  adapters.Trace{ProviderName: "gcp.gemini", Operation: "generate_content"},
	// Gemini's calls carry no id: results match by name.
	CallIDPrefix: "",
	ReadContract: readContract,
	Reasoning:    []string{"generationConfig.thinkingConfig.thinkingBudget", "generationConfig.thinkingConfig.thinkingLevel"},
	// Google's front end puts a Server-Timing header on every answer; its
	// gfet4t7 metric is not documented, so it is shown as what it is.
	ServerTiming: adapters.ServerTiming{Header: "Server-Timing", Metric: "gfet4t7", What: "Google's front end's Server-Timing (undocumented)"},
}

func readContract(root gjson.Result, d *adapters.Declared) {
	for _, t := range root.Get("tools").Array() {
		for _, fd := range adapters.FirstOf(t, "functionDeclarations", "function_declarations").Array() {
			d.AddTool(fd.Get("name").String(), adapters.FirstOf(fd, "parametersJsonSchema", "parameters_json_schema"))
		}
	}
	gc := adapters.FirstOf(root, "generationConfig", "generation_config")
	if s := adapters.FirstOf(gc, "responseJsonSchema", "response_json_schema"); s.Exists() {
		d.Schema, d.SchemaName = adapters.RawOf(s), "responseJsonSchema"
	} else if adapters.FirstOf(gc, "responseSchema", "response_schema").Exists() {
		d.SchemaNote = "responseSchema is Google's OpenAPI subset, not JSON Schema: not checked"
	}
}
