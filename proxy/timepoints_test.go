package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/store"
)

// The proxy records the same six time points as a run, from the moment
// it forwards the request: on a paced stream they come in order, the
// first output token of a reasoning stream strictly before its first
// visible text, and OpenAI's openai-processing-ms is stored as the
// server's figure, apart from the points.
func TestProxyRecordsTimePoints(t *testing.T) {
	sc, err := samples.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	tp := &tap{h: sim.New(sim.Options{Scenario: sc, Lookup: samples.Lookup, Delay: 5 * time.Millisecond})}
	up := httptest.NewServer(tp)
	defer up.Close()
	dbPath := filepath.Join(t.TempDir(), "proxy.db")
	db, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	px := New(Options{Upstream: up.URL, Provider: adapters.ProviderSim, DB: db})
	srv := httptest.NewServer(px)
	for _, c := range []struct{ path, model string }{
		{"/v1/chat/completions", "refund-model"},   // OpenAI: text only
		{"/chat/completions", "deepseek-reasoner"}, // DeepSeek thinking mode: reasoning, then text
	} {
		body := `{"model":"` + c.model + `","stream":true,"messages":[{"role":"user","content":"Please check a refund."}]}`
		req, _ := http.NewRequest("POST", srv.URL+c.path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer k")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: HTTP %d", c.path, resp.StatusCode)
		}
	}
	srv.Close()
	if err := px.Close(); err != nil {
		t.Fatal(err)
	}
	list, err := db.ListSessions(store.Filter{})
	if err != nil || len(list) != 2 {
		t.Fatalf("%d sessions (%v), want 2", len(list), err)
	}
	sent := tp.responses()
	for i, info := range list {
		s, err := db.GetSession(info.ID)
		if err != nil || len(s.Attempts) != 1 {
			t.Fatalf("session %s: %v", info.ID, err)
		}
		a := s.Attempts[0].Timings
		pts := []*time.Duration{a.Sent, a.FirstByte, a.FirstEvent, a.FirstToken, a.FirstText, a.Terminal}
		for j, p := range pts {
			if p == nil {
				t.Fatalf("%s: time point %d not recorded: %+v", s.Protocol, j, a)
			}
			if j > 0 && *p < *pts[j-1] {
				t.Errorf("%s: time point %d (%v) before point %d (%v)", s.Protocol, j, *p, j-1, *pts[j-1])
			}
		}
		// The first event is a role chunk; content is a later event, and
		// the events were paced 5ms apart.
		if *a.FirstToken <= *a.FirstEvent {
			t.Errorf("%s: first token %v, not after the first event %v", s.Protocol, *a.FirstToken, *a.FirstEvent)
		}
		if n := s.Attempts[0].RawEvents; *a.Terminal-*a.FirstByte < time.Duration(n-1)*5*time.Millisecond*9/10 {
			t.Errorf("%s: %d events paced at 5ms ended %v after the headers", s.Protocol, n, *a.Terminal-*a.FirstByte)
		}
		switch s.Protocol {
		case adapters.DeepSeekChat:
			if *a.FirstText <= *a.FirstToken {
				t.Errorf("reasoning stream: first text %v not after the first token %v", *a.FirstText, *a.FirstToken)
			}
			if a.Server != nil {
				t.Errorf("DeepSeek reports no server time, yet %v is stored", *a.Server)
			}
		case adapters.OpenAIChat:
			// sessions list newest first; sent is in request order.
			hdr := sent[len(list)-1-i].header.Get("openai-processing-ms")
			want, _ := strconv.Atoi(hdr)
			if a.Server == nil || *a.Server != time.Duration(want)*time.Millisecond || a.ServerSource != "openai-processing-ms" {
				t.Errorf("server figure %v from %q; the simulator sent openai-processing-ms %q", a.Server, a.ServerSource, hdr)
			}
		default:
			t.Errorf("unexpected protocol %s", s.Protocol)
		}
	}
	db.Close()
}
