package gemini

import (
	"net/http"
	"testing"

	"github.com/modelwire/modelwire/adapters/adapterstest"
)

func TestDecodeError(t *testing.T) {
	cases := []struct {
		file   string
		status int
		header http.Header
		typ    string
		code   string
		msg    string
		retry  int64
	}{
		{"invalid_argument.error.json", 400, nil, "INVALID_ARGUMENT", "400",
			`Invalid JSON payload received. Unknown name "additionalProperties" at 'tools[0].function_declarations[0].parameters': Cannot find field.`, 0},
		{"api_key_invalid.error.json", 400, nil, "INVALID_ARGUMENT", "API_KEY_INVALID", "API key not valid. Please pass a valid API key.", 0},
		{"permission_denied.error.json", 403, nil, "PERMISSION_DENIED", "403", "User location is not supported for the API use.", 0},
		{"not_found.error.json", 404, nil, "NOT_FOUND", "404", "", 0},
		// RetryInfo.retryDelay "36.5s" when no header says otherwise.
		{"rate_limit.error.json", 429, nil, "RESOURCE_EXHAUSTED", "429", "", 36500},
		// A Retry-After header wins over the body's RetryInfo.
		{"rate_limit.error.json", 429, http.Header{"Retry-After": {"2"}}, "RESOURCE_EXHAUSTED", "429", "", 2000},
		{"internal.error.json", 500, nil, "INTERNAL", "500", "", 0},
		{"unavailable.error.json", 503, nil, "UNAVAILABLE", "503", "The model is overloaded. Please try again later.", 0},
		{"array_wrapped.error.json", 429, nil, "RESOURCE_EXHAUSTED", "429", "Resource has been exhausted (e.g. check quota).", 0},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			e := New().DecodeError(c.status, c.header, adapterstest.ReadCapture(t, c.file))
			if e.HTTPStatus != c.status || e.Type != c.typ || e.Code != c.code || e.RetryAfterMS != c.retry {
				t.Fatalf("got %+v", e)
			}
			if c.msg != "" && e.Message != c.msg {
				t.Fatalf("message = %q", e.Message)
			}
			if e.Message == "" {
				t.Fatal("empty message")
			}
		})
	}
}

// TestDecodeErrorNotGoogle: a body that is not Google's error shape (a
// proxy's HTML page, an empty body) still yields an error quoting it.
func TestDecodeErrorNotGoogle(t *testing.T) {
	e := New().DecodeError(502, nil, []byte("<html>Bad Gateway</html>"))
	if e.HTTPStatus != 502 || e.Message != "<html>Bad Gateway</html>" {
		t.Fatalf("got %+v", e)
	}
	e = New().DecodeError(500, nil, nil)
	if e.HTTPStatus != 500 || e.Message == "" {
		t.Fatalf("got %+v", e)
	}
	e = New().DecodeError(400, nil, []byte(`{"error":{"code":400}}`))
	if e.Type != "error" || e.Message != "Bad Request" {
		t.Fatalf("got %+v", e)
	}
}
