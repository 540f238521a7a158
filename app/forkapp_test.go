package app

import (
	"net/http"
	"testing"

	"github.com/modelwire/modelwire/store"
)

// The fork re-sends the application's request without its keys (the
// provider's key comes from the environment, as for run) and without the
// transport's own headers; the application's other headers go as sent.
func TestRecordedRequestLeavesTheKeysOut(t *testing.T) {
	a := store.Attempt{Method: "POST", URL: "https://generativelanguage.googleapis.com/v1beta/models/m:streamGenerateContent?alt=sse&key=" + store.Redacted,
		RequestBody: []byte(`{"contents":[]}`), RequestHeader: http.Header{
			"Authorization":     {"Bearer " + store.Redacted},
			"X-Goog-Api-Key":    {store.Redacted},
			"X-Api-Key":         {store.Redacted},
			"Anthropic-Version": {"2023-06-01"},
			"Content-Length":    {"15"},
			"Accept-Encoding":   {"gzip"},
			"X-Stainless-Lang":  {"python"},
			"Content-Type":      {"application/json"},
		}}
	r, err := recordedRequest(a)
	if err != nil {
		t.Fatal(err)
	}
	if r.Path != "/v1beta/models/m:streamGenerateContent?alt=sse" {
		t.Errorf("path %q, want the recorded one without key=", r.Path)
	}
	want := map[string]string{"Anthropic-Version": "2023-06-01", "X-Stainless-Lang": "python", "Content-Type": "application/json"}
	if len(r.Headers) != len(want) {
		t.Errorf("headers %v, want %v", r.Headers, want)
	}
	for k, v := range want {
		if r.Headers[k] != v {
			t.Errorf("header %s = %q, want %q", k, r.Headers[k], v)
		}
	}
	if _, err := recordedRequest(store.Attempt{URL: "http://x/v1/responses", RequestBody: []byte(`[1]`)}); err == nil {
		t.Error("a body that is not an object was re-sent")
	}
}
