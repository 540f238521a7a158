package sim

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/modelwire/modelwire/adapters"
)

// The model lists, as each provider answers GET on its models path, naming
// the scenario's model: clients (and the official SDKs' "list models"
// calls, which many setup screens make first) see the one model this
// simulator plays. Shapes: openai-go v3.98.0 Model and its page {object:
// "list", data}; DeepSeek's GET /models (owned_by "deepseek", no created);
// anthropic-sdk-go v2.15.0 ModelInfo and its page {data, has_more,
// first_id, last_id}; go-genai v1.77.0 Model and ListModelsResponse
// {models}. A GET /v1/models that carries anthropic-version is Anthropic's.

// modelsCreated is the fixed creation time the lists give the model.
var modelsCreated = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// modelsRoute says which protocol's models endpoint a GET path is, and
// the model id it names ("" for the list).
func modelsRoute(method, path string, h http.Header) (protocol, id string, ok bool) {
	if method != http.MethodGet {
		return "", "", false
	}
	switch {
	case path == "/v1/models" || strings.HasPrefix(path, "/v1/models/"):
		protocol = adapters.OpenAIChat
		if h.Get("anthropic-version") != "" {
			protocol = adapters.AnthropicMessages
		}
		id = strings.TrimPrefix(strings.TrimPrefix(path, "/v1/models"), "/")
	case path == "/models" || strings.HasPrefix(path, "/models/"):
		protocol, id = adapters.DeepSeekChat, strings.TrimPrefix(strings.TrimPrefix(path, "/models"), "/")
	case path == "/v1beta/models" || (strings.HasPrefix(path, "/v1beta/models/") && !strings.Contains(path, ":")):
		protocol, id = adapters.Gemini, strings.TrimPrefix(strings.TrimPrefix(path, "/v1beta/models"), "/")
	default:
		return "", "", false
	}
	return protocol, id, true
}

// modelObject is the model as protocol describes one.
func modelObject(protocol, model string) any {
	switch protocol {
	case adapters.DeepSeekChat:
		return map[string]any{"id": model, "object": "model", "owned_by": "deepseek"}
	case adapters.AnthropicMessages:
		return map[string]any{"type": "model", "id": model, "display_name": model,
			"created_at": modelsCreated.Format(time.RFC3339), "max_input_tokens": 200000, "max_tokens": 64000}
	case adapters.Gemini:
		return map[string]any{"name": "models/" + model, "version": "001", "displayName": model,
			"description":     "The modelwire simulator's model for this scenario.",
			"inputTokenLimit": 1048576, "outputTokenLimit": 65536,
			"supportedGenerationMethods": []string{"generateContent", "countTokens"},
			"temperature":                1, "topP": 0.95, "topK": 64, "maxTemperature": 2, "thinking": true}
	}
	return map[string]any{"id": model, "object": "model", "created": modelsCreated.Unix(), "owned_by": "system"}
}

// modelsBody answers a models request: the list, the one model, or the
// provider's 404 for a model it does not have.
func modelsBody(simp adapters.Simulated, protocol, id, model string) ([]byte, *adapters.SimError) {
	if id != "" {
		if strings.TrimPrefix(id, "models/") != model {
			msg := "The model '" + id + "' does not exist"
			switch protocol {
			case adapters.AnthropicMessages:
				msg = "model: " + id
			case adapters.Gemini:
				msg = "models/" + strings.TrimPrefix(id, "models/") + " is not found for API version v1beta."
			}
			return nil, simp.ErrorResponse(http.StatusNotFound, "not_found_error", msg)
		}
		return marshalIndent(modelObject(protocol, model)), nil
	}
	var page any
	switch protocol {
	case adapters.AnthropicMessages:
		page = map[string]any{"data": []any{modelObject(protocol, model)}, "has_more": false, "first_id": model, "last_id": model}
	case adapters.Gemini:
		page = map[string]any{"models": []any{modelObject(protocol, model)}}
	default:
		page = map[string]any{"object": "list", "data": []any{modelObject(protocol, model)}}
	}
	return marshalIndent(page), nil
}

func marshalIndent(v any) []byte {
	b, _ := json.MarshalIndent(v, "", "  ")
	return append(b, '\n')
}
