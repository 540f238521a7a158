package telemetry_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelwire/modelwire/collect"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/telemetry"
)

// TestCollectForwardsToJaeger puts `modelwire collect --forward` in front
// of a real Jaeger: the refund session exported to collect is recorded
// there as a session and reaches Jaeger whole, every span forwarded.
func TestCollectForwardsToJaeger(t *testing.T) {
	if testing.Short() && !requireE2E() {
		t.Skip("-short: the Jaeger end-to-end test starts a real Jaeger")
	}
	bin := jaegerBinary(t)
	query, otlp := startJaeger(t, bin)
	dbPath, id := refundSession(t)
	src, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()

	db, err := store.Open(filepath.Join(t.TempDir(), "collected.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fwd, err := telemetry.TracesURL(otlp)
	if err != nil {
		t.Fatal(err)
	}
	c := collect.New(collect.Options{DB: db, Forward: fwd})
	srv := httptest.NewServer(c.Handler())
	if _, err := telemetry.Export(context.Background(), src, id, telemetry.Options{Endpoint: srv.URL, Content: true}); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.Forwarded != 1 || st.Sessions != 1 || st.Turns != 3 || st.Tools != 3 {
		t.Fatalf("collect: %+v", st)
	}

	tid := telemetry.TraceID(id).String()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(query + "/api/traces/" + tid)
		if err == nil {
			var body struct{ Data []jaegerTrace }
			derr := json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if derr == nil && len(body.Data) == 1 && len(body.Data[0].Spans) == 7 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Jaeger has no whole trace %s after 30 s (last error %v)", tid, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
