package redact

import (
	"net/http"
	"net/url"
	"testing"
)

func TestIsSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"Authorization": true, "Proxy-Authorization": true, "x-api-key": true, "x-goog-api-key": true, "api-key": true,
		"X-Portkey-Api-Key": true, "Ocp-Apim-Subscription-Key": true, "X-My-Secret-Token": true, "Cookie": true,
		"Set-Cookie": true, "X-Amz-Security-Token": true, "X-Auth": true, "X-Password": true, "key": true, "k%65y": true,
		"k%2565y": true, "token": true, "auth": true, "access_token": true, "api_key": true, "apiKey": true,
		"signature": true, "X-Amz-Signature": true, "client_secret": true, "X-Custom-Credential": true,
		// Not secrets: what the rules must leave readable.
		"Content-Type": false, "x-ratelimit-remaining-tokens": false, "anthropic-ratelimit-tokens-limit": false,
		"max_tokens": false, "monkey": false, "alt": false, "OpenAI-Organization": false, "anthropic-version": false,
		"x-request-id": false, "": false,
	} {
		if got := IsSecretName(name); got != want {
			t.Errorf("IsSecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		"https://x/v1beta/models/g:streamGenerateContent?alt=sse&key=AIzaSECRET":    "https://x/v1beta/models/g:streamGenerateContent?alt=sse&key=[redacted]",
		"/v1beta/models/g:generateContent?k%65y=AIzaSECRET":                         "/v1beta/models/g:generateContent?k%65y=[redacted]",
		"https://x/v1?token=t0k3n&auth=a&alt=sse":                                   "https://x/v1?token=[redacted]&auth=[redacted]&alt=sse",
		"https://x/v1?monkey=banana&max_tokens=5":                                   "https://x/v1?monkey=banana&max_tokens=5",
		"http://user:hunter2@gw.example:8080/v1":                                    "http://[redacted]@gw.example:8080/v1",
		`Post "http://u:p@127.0.0.1:1/v1?key=SECRET": dial tcp: connection refused`: `Post "http://[redacted]@127.0.0.1:1/v1?key=[redacted]": dial tcp: connection refused`,
		`{"upstream":"https://x/v1?a=1\u0026token=SECRET"}`:                         `{"upstream":"https://x/v1?a=1\u0026token=[redacted]"}`,
		"401: Authorization: Bearer sk-abcdef1234":                                  "401: Authorization: Bearer [redacted]",
		"mail me at someone@example.com":                                            "mail me at someone@example.com",
		"":                                                                          "",
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
		if got := Text(Text(in)); got != want {
			t.Errorf("Text is not idempotent on %q: %q", in, got)
		}
	}
}

func TestHeader(t *testing.T) {
	h := http.Header{
		"Authorization":                {"Bearer sk-secret-1"},
		"X-Portkey-Api-Key":            {"pk-secret"},
		"Ocp-Apim-Subscription-Key":    {"apim-secret"},
		"X-My-Secret-Token":            {"custom"},
		"X-Ratelimit-Remaining-Tokens": {"4000"},
		"Location":                     {"https://x/v1?key=SECRET"},
	}
	got := Header(h)
	for name, want := range map[string]string{
		"Authorization": "Bearer [redacted]", "X-Portkey-Api-Key": "[redacted]", "Ocp-Apim-Subscription-Key": "[redacted]",
		"X-My-Secret-Token": "[redacted]", "X-Ratelimit-Remaining-Tokens": "4000", "Location": "https://x/v1?key=[redacted]",
	} {
		if got.Get(name) != want {
			t.Errorf("%s: %q, want %q", name, got.Get(name), want)
		}
	}
	if h.Get("Authorization") != "Bearer sk-secret-1" {
		t.Error("Header changed its argument")
	}
}

func TestKnown(t *testing.T) {
	u, _ := url.Parse("https://gw/v1/chat?k%65y=query-secret-1&alt=sse")
	up, _ := url.Parse("http://upstream-user:upstream-pass@gw")
	k := Collect(http.Header{
		"Authorization":     {"Bearer bearer-secret-1"},
		"X-My-Secret-Token": {"custom-secret-1"},
		"Content-Type":      {"application/json-not-a-secret"},
	}, u, up)
	in := "echo bearer-secret-1 custom-secret-1 query-secret-1 upstream-user upstream-pass application/json-not-a-secret"
	want := "echo [redacted] [redacted] [redacted] [redacted] [redacted] application/json-not-a-secret"
	if got := k.Text(in); got != want {
		t.Errorf("Known.Text = %q", got)
	}
	if got := string(k.Bytes([]byte(in))); got != want {
		t.Errorf("Known.Bytes = %q", got)
	}
	eh := k.Header(http.Header{"X-Echo": {"you sent custom-secret-1"}})
	if eh.Get("X-Echo") != "you sent [redacted]" {
		t.Errorf("Known.Header: %q", eh.Get("X-Echo"))
	}
	enc := Collect(nil, mustURL("https://gw/v1?key=a%2Bsecret%2Fvalue"))
	if got := enc.Text("quoted: a%2Bsecret%2Fvalue and a+secret/value"); got != "quoted: [redacted] and [redacted]" {
		t.Errorf("an encoded secret: %q", got)
	}
	short := Collect(http.Header{"X-Api-Key": {"abc"}})
	if !short.Empty() || short.Text("abc") != "abc" {
		t.Error("a secret shorter than MinSecret is searched for")
	}
	var none *Known
	if none.Text("x") != "x" || !none.Empty() {
		t.Error("a nil Known changes text")
	}
}

func TestJSONMembers(t *testing.T) {
	in := `{"api_key":"s1","apiKey":"s2","client_secret":"s3","key":"ordinary","token":"Hello","max_tokens":5}`
	want := `{"api_key":"[redacted]","apiKey":"[redacted]","client_secret":"[redacted]","key":"ordinary","token":"Hello","max_tokens":5}`
	if got := string(JSONMembers([]byte(in))); got != want {
		t.Errorf("JSONMembers = %s", got)
	}
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}
