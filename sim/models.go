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
// {models}. Which protocol's endpoint a GET is, and the facts that differ
// within a shape, are its descriptor's (registry.ModelsRoute, Models): a
// GET /v1/models that carries anthropic-version is Anthropic's.

// modelsCreated is the fixed creation time the lists give the model.
var modelsCreated = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// The shapes, members in the order the providers write them (Anthropic's
// alphabetical, as its reference shows them).
type (
	openAIModel struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created,omitempty"`
		OwnedBy string `json:"owned_by"`
	}
	openAIList struct {
		Object string `json:"object"`
		Data   []any  `json:"data"`
	}
	anthropicModel struct {
		CreatedAt      string `json:"created_at"`
		DisplayName    string `json:"display_name"`
		ID             string `json:"id"`
		MaxInputTokens int    `json:"max_input_tokens"`
		MaxTokens      int    `json:"max_tokens"`
		Type           string `json:"type"`
	}
	anthropicList struct {
		Data    []any  `json:"data"`
		FirstID string `json:"first_id"`
		HasMore bool   `json:"has_more"`
		LastID  string `json:"last_id"`
	}
	geminiModel struct {
		Name                       string   `json:"name"`
		Version                    string   `json:"version"`
		DisplayName                string   `json:"displayName"`
		Description                string   `json:"description"`
		InputTokenLimit            int      `json:"inputTokenLimit"`
		OutputTokenLimit           int      `json:"outputTokenLimit"`
		SupportedGenerationMethods []string `json:"supportedGenerationMethods"`
		Temperature                float64  `json:"temperature"`
		TopP                       float64  `json:"topP"`
		TopK                       int      `json:"topK"`
		MaxTemperature             float64  `json:"maxTemperature"`
		Thinking                   bool     `json:"thinking"`
	}
	geminiList struct {
		Models []any `json:"models"`
	}
)

// modelObject is the model as the endpoint describes one, in its Shape.
func modelObject(m adapters.ModelsEndpoint, model string) any {
	switch m.Shape {
	case adapters.ModelsShapeAnthropic:
		return anthropicModel{CreatedAt: modelsCreated.Format(time.RFC3339), DisplayName: model, ID: model,
			MaxInputTokens: 200000, MaxTokens: 64000, Type: "model"}
	case adapters.ModelsShapeGemini:
		return geminiModel{Name: "models/" + model, Version: "001", DisplayName: model,
			Description: "The modelwire simulator's model for this scenario.", InputTokenLimit: 1048576, OutputTokenLimit: 65536,
			SupportedGenerationMethods: []string{"generateContent", "countTokens"},
			Temperature:                1, TopP: 0.95, TopK: 64, MaxTemperature: 2, Thinking: true}
	}
	o := openAIModel{ID: model, Object: "model", OwnedBy: m.OwnedBy}
	if m.Created {
		o.Created = modelsCreated.Unix()
	}
	return o
}

// modelsBody answers a models request: the list, the one model, or the
// provider's 404 for a model it does not have (m.NotFound).
func modelsBody(simp adapters.Simulated, m adapters.ModelsEndpoint, id, model string) ([]byte, *adapters.SimError) {
	if id != "" {
		if bare := strings.TrimPrefix(id, "models/"); bare != model {
			msg := strings.NewReplacer("{id}", id, "{model}", bare).Replace(m.NotFound)
			return nil, simp.ErrorResponse(http.StatusNotFound, "not_found_error", msg)
		}
		return marshalIndent(modelObject(m, model)), nil
	}
	one := []any{modelObject(m, model)}
	switch m.Shape {
	case adapters.ModelsShapeAnthropic:
		return marshalIndent(anthropicList{Data: one, FirstID: model, LastID: model}), nil
	case adapters.ModelsShapeGemini:
		return marshalIndent(geminiList{Models: one}), nil
	}
	return marshalIndent(openAIList{Object: "list", Data: one}), nil
}

func marshalIndent(v any) []byte {
	b, _ := json.MarshalIndent(v, "", "  ")
	return append(b, '\n')
}
