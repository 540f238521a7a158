package ui

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/app"
	"github.com/modelwire/modelwire/proxy"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/transport"
)

// The workbench as a recording proxy's screen: a real proxy in front of
// the simulator reports to a Recording; the model runs the recording as
// its live session and folds what the bridge would deliver.

type recordingRig struct {
	m     *Model
	rec   *Recording
	proxy string
	db    *store.DB
	stop  func()
}

func newRecordingRig(t *testing.T, hold bool) *recordingRig {
	t.Helper()
	sc, err := samples.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(sim.New(sim.Options{Scenario: sc}))
	db, err := store.Open(filepath.Join(t.TempDir(), "rec.db"))
	if err != nil {
		t.Fatal(err)
	}
	rec := NewRecording()
	opts := proxy.Options{Upstream: up.URL, Provider: adapters.ProviderSim, DB: db, Observe: rec.Observe}
	if hold {
		opts.Hold = rec
	}
	px := proxy.New(opts)
	ps := httptest.NewServer(px)

	m := New(Options{Backend: rec, Library: app.Library{DB: db}, Run: RecordingRunConfig("127.0.0.1:8788", "sim"), Getenv: func(string) string { return "" }})
	m.Update(tea.WindowSizeMsg{Width: 140, Height: 44})
	sm, ok := m.Init()().(scenarioMsg)
	if !ok || sm.err != nil || sm.sc != nil {
		t.Fatalf("Init: %+v", sm)
	}
	_, runIt := m.Update(sm)
	if runIt == nil {
		t.Fatal("no run started")
	}
	go runIt() // Recording.Run: attached until the model cancels it
	r := &recordingRig{m: m, rec: rec, proxy: ps.URL, db: db}
	r.stop = func() {
		m.Close()
		ps.Close()
		_ = px.Close()
		up.Close()
		_ = db.Close()
	}
	t.Cleanup(r.stop)
	// Wait until the run is attached.
	deadline := time.Now().Add(5 * time.Second)
	for {
		rec.mu.Lock()
		attached := rec.hooks != nil
		rec.mu.Unlock()
		if attached {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatal("the recording run never attached")
		}
		time.Sleep(time.Millisecond)
	}
}

// send posts the refund case's first request for a protocol.
func (r *recordingRig) send(t *testing.T, protocol string, stream bool) (int, []byte) {
	sc, _ := samples.Lookup("refund")
	p, _ := registry.Lookup(protocol)
	w, err := p.Encode(sc.Request(stream, adapters.HistoryFull), adapters.ProviderSim)
	if err != nil {
		t.Error(err)
		return 0, nil
	}
	req, _ := http.NewRequest(w.Method, transport.Provider{BaseURL: r.proxy}.URL(w.Path), bytes.NewReader(w.Body))
	for k, v := range w.Headers {
		req.Header.Set(k, v)
	}
	transport.Provider{Key: "sk-ui-test-key-123456"}.Authorize(req.Header, protocol)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0, nil
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.Bytes()
}

// pump folds what the bridge would deliver until cond holds.
func (r *recordingRig) pump(t *testing.T, what string, cond func(msg tea.Msg) bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case msg := <-r.m.br.ch:
			r.m.Update(msg)
			if cond(msg) {
				return
			}
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func validated(turn int) func(tea.Msg) bool {
	return func(msg tea.Msg) bool {
		if u, ok := msg.(updatesMsg); ok {
			for _, x := range u.ups {
				if x.Kind == session.UpValidated && x.Turn == turn {
					return true
				}
			}
		}
		return false
	}
}

func TestRecordingShowsExchangesLive(t *testing.T) {
	r := newRecordingRig(t, false)
	if status, _ := r.send(t, adapters.AnthropicMessages, true); status != 200 {
		t.Fatalf("status %d", status)
	}
	r.pump(t, "the first exchange", validated(1))
	st := r.m.d.state
	cur := st.Current()
	if cur == nil || cur.N != 1 || cur.Request == nil || cur.Request.Path != "/v1/messages" || len(cur.Lanes) != 1 {
		t.Fatalf("turn %+v", cur)
	}
	// The request asks for no thinking: one lane, the call.
	if cur.Lanes[0].Kind != adapters.KindToolCall || cur.Lanes[0].Name != "get_order_line" || cur.Lanes[0].State != adapters.ItemParsed {
		t.Errorf("tool lane %+v", cur.Lanes[0])
	}
	if len(st.Layers) != 5 || st.Layers[0].Status != session.Pass || st.Layers[1].Status != session.Pass {
		t.Errorf("layers %+v", st.Layers)
	}
	if v := cur.Request.Headers["x-api-key"]; v != store.Redacted {
		t.Errorf("the key header shows %q", v)
	}
	view := r.m.View()
	contains(t, view, "(recording)", "proxy 127.0.0.1:8788", "turn 1", "get_order_line")
	if strings.Contains(view, "sk-ui-test-key") {
		t.Error("the screen shows the key")
	}
	// Judged on transport and protocol only: not "2/5 pass", which reads as
	// three failures; and no sources to edit or compare.
	contains(t, view, "Validation · 2/2 pass · 3 skipp", "the application's own", "no sources", "to map · w wire")
	if strings.Contains(view, "enter edit") || strings.Contains(view, "c compare") {
		t.Errorf("the assembly panel offers what a proxied request cannot do:\n%s", view)
	}

	// A second conversation, another protocol: the next view turn.
	if status, _ := r.send(t, adapters.Gemini, false); status != 200 {
		t.Fatalf("status %d", status)
	}
	r.pump(t, "the second exchange", validated(2))
	if cur := r.m.d.state.Current(); cur.N != 2 || !strings.Contains(cur.Request.Path, ":generateContent") {
		t.Errorf("turn 2 %+v", cur.Request)
	}

	// The sessions browser lists both conversations, source proxy.
	list, err := app.Library{DB: r.db}.List()
	if err != nil {
		t.Fatal(err)
	}
	proxied := 0
	for _, s := range list {
		if s.Source == "proxy" {
			proxied++
		}
	}
	if proxied != 2 {
		t.Errorf("%d proxy sessions listed: %+v", proxied, list)
	}
}

func TestRecordingHoldAsksInTheDialog(t *testing.T) {
	r := newRecordingRig(t, true)
	type result struct {
		status int
		body   []byte
	}
	for _, c := range []struct {
		keys   []string
		status int
	}{{[]string{"a"}, 200}, {[]string{"r", "n", "o", "enter"}, 403}} {
		done := make(chan result, 1)
		go func() {
			s, b := r.send(t, adapters.OpenAIChat, true)
			done <- result{s, b}
		}()
		r.pump(t, "the hold question", func(msg tea.Msg) bool {
			_, ok := msg.(askMsg)
			return ok
		})
		d, ok := r.m.top().(*approvalDialog)
		if !ok || d.p.Name != "get_order_line" {
			t.Fatalf("top dialog %T", r.m.top())
		}
		// Hold offers edit too (issue 30): an edited call is re-encoded in
		// the protocol's own format before the application gets it.
		if v := r.m.View(); !strings.Contains(v, "a approve · e edit · r reject · A approve all") {
			t.Errorf("the hold dialog's keys:\n%s", v)
		}
		var cmds []tea.Cmd
		for _, k := range c.keys {
			cmds = append(cmds, press(r.m, k))
		}
		for _, cmd := range cmds {
			run(cmd)
		}
		select {
		case res := <-done:
			if res.status != c.status {
				t.Errorf("keys %v: client got %d %s", c.keys, res.status, res.body)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("keys %v: the client never got its answer", c.keys)
		}
	}
}
