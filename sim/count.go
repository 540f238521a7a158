package sim

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelwire/modelwire/adapters"
)

// countRoute reports whether a path is a token-count endpoint, and whose:
// Anthropic POST /v1/messages/count_tokens, Gemini
// POST /v1beta/models/{model}:countTokens.
func countRoute(method, path string) (string, bool) {
	if method != http.MethodPost {
		return "", false
	}
	switch {
	case path == "/v1/messages/count_tokens":
		return adapters.AnthropicMessages, true
	case strings.HasPrefix(path, "/v1beta/models/") && strings.HasSuffix(path, ":countTokens"):
		return adapters.Gemini, true
	}
	return "", false
}

// countTokens answers a count request with the simulator's own count, the
// same one its usage reports (inputTokens), so a client's estimate has
// something to differ from.
// Anthropic answers {"input_tokens":N}; Gemini {"totalTokens":N}.
func countTokens(w http.ResponseWriter, protocol string, simp adapters.Simulated, body []byte) {
	var v any
	if json.Unmarshal(body, &v) != nil {
		writeError(w, simp.ErrorResponse(http.StatusBadRequest, "invalid_request_error", "The request body is not valid JSON."))
		return
	}
	root, _ := v.(map[string]any)
	if protocol == adapters.AnthropicMessages {
		if _, ok := root["messages"].([]any); !ok {
			writeError(w, simp.ErrorResponse(http.StatusBadRequest, "invalid_request_error", "messages: Field required"))
			return
		}
	} else if _, ok := root["contents"]; !ok {
		if _, ok := root["generateContentRequest"]; !ok {
			writeError(w, simp.ErrorResponse(http.StatusBadRequest, "invalid_request_error", "contents or generateContentRequest is required."))
			return
		}
	}
	n := inputTokens(body)
	w.Header().Set("Content-Type", "application/json")
	if protocol == adapters.AnthropicMessages {
		_, _ = w.Write([]byte(`{"input_tokens":` + strconv.Itoa(n) + `}`))
		return
	}
	_, _ = w.Write([]byte(`{"totalTokens":` + strconv.Itoa(n) + `}`))
}
