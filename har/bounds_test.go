package har

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/store"
)

// A foreign HAR whose SSE body was cut before its terminal event imports
// as what it is, failed at the protocol layer; a whole one as done
// (issue 29).
func TestHARCutStreamImportsFailed(t *testing.T) {
	db, _ := openTemp(t)
	cut := harEntryMap("POST", "https://api.openai.com/v1/chat/completions", 200, "text/event-stream", sseBody(`{"d":"hal"}`), "")
	whole := harEntryMap("POST", "https://api.openai.com/v1/chat/completions", 200, "text/event-stream", sseBody(`{"d":"whole"}`, `{"finish":"stop"}`, "[DONE]"), "")
	for _, c := range []struct {
		entry  map[string]any
		status store.Status
		layer  string
	}{{cut, store.StatusFailed, "protocol"}, {whole, store.StatusDone, ""}} {
		res, err := Import(db, bytes.NewReader(harJSON(t, c.entry)), "x.har", fakeLookup)
		if err != nil {
			t.Fatal(err)
		}
		list, err := db.ListSessions(store.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range list {
			if s.ID == res.Sessions[0] && (s.Status != c.status || s.FailedLayer != c.layer) {
				t.Errorf("imported %s at %q, want %s at %q", s.Status, s.FailedLayer, c.status, c.layer)
			}
		}
	}
}

// A body kept as the wire had it, gzip in base64, is decompressed: its
// events are read.
func TestHARGzipBase64Body(t *testing.T) {
	db, _ := openTemp(t)
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(sseBody(`{"d":"zipped"}`, `{"finish":"stop"}`, "[DONE]")))
	zw.Close()
	e := harEntryMap("POST", "https://api.openai.com/v1/chat/completions", 200, "text/event-stream",
		base64.StdEncoding.EncodeToString(z.Bytes()), "base64", "Content-Encoding", "gzip")
	res, err := Import(db, bytes.NewReader(harJSON(t, e)), "z.har", fakeLookup)
	if err != nil {
		t.Fatal(err)
	}
	s, err := db.GetSession(res.Sessions[0])
	if err != nil || s.Status != store.StatusDone || s.Events < 3 {
		t.Fatalf("%+v %v", s, err)
	}
}

// A crafted turn number of 2·10⁹ is refused at import, in a HAR, before
// anything is written (the JSONL half is jsonl's).
func TestImportRefusesHugeTurns(t *testing.T) {
	db, _ := openTemp(t)
	e := harEntryMap("POST", "https://api.openai.com/v1/chat/completions", 200, "text/event-stream", sseBody(`{"d":"x"}`, `{"finish":"stop"}`), "")
	e["_modelwire"] = map[string]any{"session": "s1", "turn": 2000000000, "attempt": 1, "protocol": "openai-chat", "status": "done"}
	_, err := Import(db, bytes.NewReader(harJSON(t, e)), "huge.har", fakeLookup)
	if err == nil || !strings.Contains(err.Error(), "can exceed") {
		t.Errorf("HAR: %v", err)
	}

	if list, _ := db.ListSessions(store.Filter{}); len(list) != 0 {
		t.Errorf("%d sessions written", len(list))
	}
}
