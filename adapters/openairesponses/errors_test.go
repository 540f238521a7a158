package openairesponses

import (
	"net/http"
	"testing"

	"github.com/modelwire/modelwire/adapters/adapterstest"
)

func TestDecodeError(t *testing.T) {
	cases := []struct {
		file         string
		status       int
		header       http.Header
		typ, code    string
		message      string
		retryAfterMS int64
	}{
		{"error_400.json", 400, nil, "invalid_request_error", "", "No tool output found for function call call_Q7mJ2xZp8KcN4vRt1sWy6bLd.", 0},
		{"error_401.json", 401, nil, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: sk-test***********0000. You can find your API key at https://platform.openai.com/account/api-keys.", 0},
		{"error_404.json", 404, nil, "invalid_request_error", "previous_response_not_found", "Previous response with id 'resp_68f0a1c2d3e48190b5a6c7d8e9f00101' not found.", 0},
		{"error_429.json", 429, http.Header{"Retry-After": {"1"}, "X-Ratelimit-Reset-Tokens": {"497ms"}}, "tokens", "rate_limit_exceeded", "", 1000},
		{"error_429.json", 429, http.Header{"Retry-After-Ms": {"497"}, "Retry-After": {"1"}}, "tokens", "rate_limit_exceeded", "", 497},
		{"error_429_quota.json", 429, nil, "insufficient_quota", "insufficient_quota", "", 0},
		{"error_500.json", 500, nil, "server_error", "", "The server had an error while processing your request. Sorry about that!", 0},
	}
	for _, c := range cases {
		e := New().DecodeError(c.status, c.header, adapterstest.ReadCapture(t, c.file))
		if e.HTTPStatus != c.status || e.Type != c.typ || e.Code != c.code || e.RetryAfterMS != c.retryAfterMS {
			t.Errorf("%s: %+v, want status %d type %s code %s retry %d", c.file, e, c.status, c.typ, c.code, c.retryAfterMS)
		}
		if c.message != "" && e.Message != c.message {
			t.Errorf("%s: message %q", c.file, e.Message)
		}
		if e.Message == "" {
			t.Errorf("%s: no message", c.file)
		}
	}
	// A body that is not JSON (a proxy's HTML page) still gives an error.
	e := New().DecodeError(502, nil, []byte("<html>Bad Gateway</html>"))
	if e.HTTPStatus != 502 || e.Message == "" {
		t.Errorf("non-JSON body: %+v", e)
	}
}
