package store

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// The file formats (packages har and jsonl) import store, so store's own
// tests that need a HAR or JSONL import (snapshots of imported sessions,
// the bench fixture's export) get them handed in by the external test
// package (formats_test.go).
var (
	importHAR     func(db *DB, r io.Reader, name string, lookup func(string) (adapters.Protocol, error)) (ImportResult, error)
	importJSONL   func(db *DB, r io.ReadSeeker, name string) (ImportResult, error)
	exportJSONLTo func(db *DB, w io.Writer, id string) error
)

// SetFormats is how the external test package hands them in.
func SetFormats(har func(db *DB, r io.Reader, name string, lookup func(string) (adapters.Protocol, error)) (ImportResult, error),
	jsonlImport func(db *DB, r io.ReadSeeker, name string) (ImportResult, error), jsonlExport func(db *DB, w io.Writer, id string) error) {
	importHAR, importJSONL, exportJSONLTo = har, jsonlImport, jsonlExport
}

// fakeLookup answers the toy protocol the tests' captures speak.
var fakeLookup = adapterstest.FakeLookup

func exportJSONL(t *testing.T, db *DB, id string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := exportJSONLTo(db, &b, id); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func sseBody(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		b.WriteString("data: " + e + "\n\n")
	}
	return b.String()
}

func harJSON(t *testing.T, entries ...map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"log": map[string]any{"version": "1.2", "creator": map[string]any{"name": "test"}, "entries": entries}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func harEntryMap(method, url string, status int, mime, text, encoding string, headers ...string) map[string]any {
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
