package adapterstest

// HAR files for the tests of what imports them (store, har).

import (
	"encoding/json"
	"strings"
	"testing"
)

// SSEBody is an SSE body of data-only events.
func SSEBody(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		b.WriteString("data: " + e + "\n\n")
	}
	return b.String()
}

// HARJSON is a HAR 1.2 file holding entries.
func HARJSON(t testing.TB, entries ...map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"log": map[string]any{"version": "1.2", "creator": map[string]any{"name": "test"}, "entries": entries}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// HAREntry is one HAR entry: a POST-like request to url (its body a
// streaming request of model gpt-x) and a response of status with the
// content text (encoding "" or "base64") and the headers given as
// name, value pairs.
func HAREntry(method, url string, status int, mime, text, encoding string, headers ...string) map[string]any {
	var hs []map[string]string
	for i := 0; i+1 < len(headers); i += 2 {
		hs = append(hs, map[string]string{"name": headers[i], "value": headers[i+1]})
	}
	content := map[string]any{"size": len(text), "mimeType": mime, "text": text}
	if encoding != "" {
		content["encoding"] = encoding
	}
	return map[string]any{
		"startedDateTime": "2026-03-04T05:06:07.123+00:00",
		"time":            50,
		"request": map[string]any{"method": method, "url": url, "httpVersion": "HTTP/2", "headers": hs,
			"queryString": []any{}, "cookies": []any{}, "headersSize": -1, "bodySize": 20,
			"postData": map[string]any{"mimeType": "application/json", "text": `{"model":"gpt-x","stream":true}`}},
		"response": map[string]any{"status": status, "statusText": "", "httpVersion": "HTTP/2", "headers": []any{},
			"cookies": []any{}, "content": content, "redirectURL": "", "headersSize": -1, "bodySize": -1},
		"cache":   map[string]any{},
		"timings": map[string]any{"blocked": 1, "dns": -1, "connect": -1, "send": 2, "wait": 30, "receive": 17},
	}
}
