package har

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/store"
)

// A HAR export carries every time point, the ones HAR's timings have no
// field for in _modelwire.times, and they come back on import.
func TestHARTimePointsRoundTrip(t *testing.T) {
	db, _ := openTemp(t)
	w, err := db.CreateSession(store.SessionMeta{Title: "points", Protocol: adapters.OpenAIChat})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := w.StartAttempt(1, store.AttemptMeta{Method: "POST", URL: "https://api.openai.com/v1/chat/completions",
		Body: []byte(`{"stream":true}`), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	ms := time.Millisecond
	for m, at := range map[store.Mark]time.Duration{store.MarkSent: 2 * ms, store.MarkFirstByte: 30 * ms,
		store.MarkFirstEvent: 31 * ms, store.MarkFirstToken: 35 * ms, store.MarkFirstText: 40 * ms, store.MarkTerminal: 90 * ms} {
		if err := rec.MarkAt(m, at); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.ServerTime(80*ms, "openai-processing-ms"); err != nil {
		t.Fatal(err)
	}
	if err := rec.Response(200, http.Header{"Content-Type": {"text/event-stream"}}); err != nil {
		t.Fatal(err)
	}
	for i, d := range []string{`{"d":"Hello"}`, `{"finish":"stop"}`} {
		if err := rec.AppendAt(time.Duration(31+i*50)*ms, adapters.Step{Index: i, Raw: adapters.RawEvent{Data: d}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.FinishAt(nil, 95*ms); err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(store.StatusDone); err != nil {
		t.Fatal(err)
	}
	orig, err := db.GetSession(w.ID())
	if err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	if err := Export(db, &out, w.ID(), "test"); err != nil {
		t.Fatal(err)
	}
	var h harFile
	if err := json.Unmarshal(out.Bytes(), &h); err != nil || len(h.Log.Entries) != 1 {
		t.Fatalf("exported %d entries (%v)", len(h.Log.Entries), err)
	}
	if x := h.Log.Entries[0].Modelwire.Times; x == nil || x.FirstToken == nil || *x.FirstToken != 35 || x.ServerSource != "openai-processing-ms" {
		t.Fatalf("_modelwire.times %+v, want the first token at 35 ms and the server's figure", x)
	}
	res, err := Import(db, bytes.NewReader(out.Bytes()), "points.har", fakeLookup)
	if err != nil || len(res.Sessions) != 1 {
		t.Fatalf("import: %+v %v", res, err)
	}
	back, err := db.GetSession(res.Sessions[0])
	if err != nil {
		t.Fatal(err)
	}
	want, got := orig.Attempts[0].Timings, back.Attempts[0].Timings
	want.Finished, got.Finished = nil, nil // HAR has the end of the transfer, not of the attempt
	if !reflect.DeepEqual(got, want) {
		t.Errorf("imported timings\n%s\nwant\n%s", fmtTimings(got), fmtTimings(want))
	}

	// A file's points that are not measurements are left out, not stored.
	h.Log.Entries[0].Modelwire.Times.FirstText = new(float64)
	*h.Log.Entries[0].Modelwire.Times.FirstText = -5
	h.Log.Entries[0].Modelwire.Times.Server = new(float64)
	*h.Log.Entries[0].Modelwire.Times.Server = 1e300
	bad, _ := json.Marshal(h)
	res, err = Import(db, bytes.NewReader(bad), "bad.har", fakeLookup)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := db.GetSession(res.Sessions[0])
	if tm := s.Attempts[0].Timings; tm.Server != nil || tm.FirstText == nil || *tm.FirstText != 30*ms {
		t.Errorf("bad points imported as %s; want no server figure, the first text at the first byte", fmtTimings(tm))
	}
}

func fmtTimings(tm store.Timings) string {
	b, _ := json.Marshal(tm)
	return string(b) + " source " + tm.ServerSource
}
