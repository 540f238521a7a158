package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"reflect"
	"testing"
)

func TestRedact(t *testing.T) {
	h := http.Header{
		"Authorization":  {"Bearer sk-secret-1"},
		"X-Api-Key":      {"sk-ant-secret-2"},
		"X-Goog-Api-Key": {"AIza-secret-3"},
		"Api-Key":        {"azure-secret-4"},
		"Content-Type":   {"application/json"},
		"Cookie":         {"session=abc"},
	}
	got := Redact(h)
	want := http.Header{
		"Authorization":  {"Bearer [redacted]"},
		"X-Api-Key":      {"[redacted]"},
		"X-Goog-Api-Key": {"[redacted]"},
		"Api-Key":        {"[redacted]"},
		"Content-Type":   {"application/json"},
		"Cookie":         {"[redacted]"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Redact(header) = %v", got)
	}
	if h.Get("Authorization") != "Bearer sk-secret-1" {
		t.Errorf("Redact changed its argument")
	}
	m := Redact(map[string]string{"authorization": "sk-plain", "x-goog-api-key": "k", "accept": "*/*"})
	if m["authorization"] != "[redacted]" || m["x-goog-api-key"] != "[redacted]" || m["accept"] != "*/*" {
		t.Errorf("Redact(map) = %v", m)
	}
	for in, want := range map[string]string{
		"https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent?alt=sse&key=AIzaSECRET": "https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent?alt=sse&key=[redacted]",
		"https://x/v1?key=AIza&alt=sse":                           "https://x/v1?key=[redacted]&alt=sse",
		"https://x/v1?API_KEY=abc#frag":                           "https://x/v1?API_KEY=[redacted]#frag",
		`Post "https://x/v1?key=SECRET": connection refused`:      `Post "https://x/v1?key=[redacted]": connection refused`,
		"https://x/v1?monkey=banana":                              "https://x/v1?monkey=banana",
		"401: invalid header Authorization: Bearer sk-abcdef1234": "401: invalid header Authorization: Bearer [redacted]",
		"": "",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

const planted = "sk-PLANTED-d6f1c0ffee"

// TestNoSecretOnDisk plants a key everywhere a caller could pass one and
// greps the database and its WAL for it.
func TestNoSecretOnDisk(t *testing.T) {
	db, path := openTemp(t)
	meta := refundMeta()
	meta.BaseURL = "https://gw:" + planted + "@proxy.example/v1?key=" + planted
	meta.Manifest.Parameters = json.RawMessage(`{"upstream":"https://u:` + planted + `@gw/v1?a=1&token=` + planted + `"}`)
	w, err := db.CreateSession(meta)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := w.StartAttempt(1, AttemptMeta{
		Method: "POST",
		URL:    "https://u:" + planted + "@generativelanguage.googleapis.com/v1beta/models/m:streamGenerateContent?alt=sse&k%65y=" + planted + "&auth=" + planted,
		Header: http.Header{
			"Authorization":  {"Bearer " + planted},
			"X-Api-Key":      {planted},
			"X-Goog-Api-Key": {planted},
			"Api-Key":        {planted},
			// The gateways' and anyone's: a name that says key or token.
			"X-Portkey-Api-Key":         {planted},
			"Ocp-Apim-Subscription-Key": {planted},
			"X-My-Secret-Token":         {planted},
		},
		Body:        []byte(`{"contents":[]}`),
		RetryReason: "401 for key=" + planted,
	})
	if err != nil {
		t.Fatal(err)
	}
	rec.Response(401, http.Header{"Set-Cookie": {"k=" + planted}, "Www-Authenticate": {"Bearer " + planted}})
	rec.Finish(errors.New(`Post "https://x/v1?key=` + planted + `": 401 Unauthorized`))
	// A validation detail quoting a transport error, which quotes the URL.
	if err := w.RecordValidation(1, []Validation{{Layer: "transport", Status: "fail",
		Detail: `cannot reach the upstream: Post "http://u:` + planted + `@127.0.0.1:1/v1?token=` + planted + `": connection refused`}}); err != nil {
		t.Fatal(err)
	}
	w.Finish(StatusFailed)

	// grep reads each file that must exist at that moment: a missing file
	// fails the test rather than passing it unread.
	grep := func(when string, files ...string) {
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatalf("%s: %v", when, err)
			}
			if len(b) == 0 {
				t.Fatalf("%s: %s is empty: nothing was written to check", when, p)
			}
			if bytes.Contains(b, []byte(planted)) || bytes.Contains(b, []byte("PLANTED")) {
				t.Errorf("%s: the planted key is in %s", when, p)
			}
		}
	}
	// Before close the session's rows are in the WAL (not yet
	// checkpointed); the main file holds the schema.
	grep("before close", path, path+"-wal")
	s, err := db.GetSession(w.ID())
	if err != nil {
		t.Fatal(err)
	}
	if s.Attempts[0].RequestHeader.Get("X-Goog-Api-Key") != Redacted || s.Attempts[0].Error == "" {
		t.Errorf("attempt %+v", s.Attempts[0])
	}
	db.Close()
	// Closing checkpoints the WAL into the main file and removes the WAL.
	grep("after close", path)
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after close the WAL is still there (%v): the check above did not see everything", err)
	}
}
