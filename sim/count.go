package sim

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/modelwire/modelwire/adapters"
)

// countTokens answers a request to a token-count endpoint (which one is
// registry.CountRoute's) with the simulator's own count, the same one its
// usage reports (inputTokens), so a client's estimate has something to
// differ from. A request without any of c.Needs gets the provider's 400
// (c.Missing); the answer is {c.Answer: N} (Anthropic's input_tokens,
// Gemini's totalTokens).
func countTokens(w http.ResponseWriter, c *adapters.CountEndpoint, simp adapters.Simulated, body []byte) {
	var v any
	if json.Unmarshal(body, &v) != nil {
		writeError(w, simp.ErrorResponse(http.StatusBadRequest, "invalid_request_error", "The request body is not valid JSON."))
		return
	}
	root, _ := v.(map[string]any)
	if !hasNeeded(root, c) {
		writeError(w, simp.ErrorResponse(http.StatusBadRequest, "invalid_request_error", c.Missing))
		return
	}
	n := inputTokens(body)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{` + strconv.Quote(c.Answer) + `:` + strconv.Itoa(n) + `}`))
}

// hasNeeded: the request has one of the fields a count needs (as a list,
// where the endpoint takes only one).
func hasNeeded(root map[string]any, c *adapters.CountEndpoint) bool {
	for _, f := range c.Needs {
		v, ok := root[f]
		if _, list := v.([]any); ok && (list || !c.NeedsList) {
			return true
		}
	}
	return false
}
