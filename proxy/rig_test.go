package proxy

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/store"
)

// The test rig: an in-process simulator (the refund case) behind a tap
// that keeps every response exactly as the simulator wrote it, and a
// proxy in front of it recording into a fresh database — what
// `modelwire proxy --upstream sim` runs, in one process.

// sent is one response as the simulator wrote it.
type sent struct {
	method, path string
	status       int
	header       http.Header
	body         []byte
}

// tap keeps what a handler writes.
type tap struct {
	h  http.Handler
	mu sync.Mutex
	rs []*sent
	// keys are the key headers the upstream received.
	keys []string
}

func (tp *tap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := &sent{method: r.Method, path: r.URL.Path}
	tp.mu.Lock()
	tp.rs = append(tp.rs, s)
	for _, h := range []string{"Authorization", "X-Api-Key", "X-Goog-Api-Key"} {
		if v := r.Header.Get(h); v != "" {
			tp.keys = append(tp.keys, strings.TrimPrefix(v, "Bearer "))
		}
	}
	tp.mu.Unlock()
	tp.h.ServeHTTP(&tapWriter{ResponseWriter: w, s: s, mu: &tp.mu}, r)
}

func (tp *tap) responses() []*sent {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	out := make([]*sent, len(tp.rs))
	for i, s := range tp.rs {
		c := *s
		c.body = append([]byte(nil), s.body...)
		out[i] = &c
	}
	return out
}

type tapWriter struct {
	http.ResponseWriter
	s  *sent
	mu *sync.Mutex
}

func (w *tapWriter) WriteHeader(code int) {
	w.mu.Lock()
	w.s.status, w.s.header = code, w.Header().Clone()
	w.mu.Unlock()
	w.ResponseWriter.WriteHeader(code)
}

func (w *tapWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	if w.s.status == 0 {
		w.s.status, w.s.header = 200, w.Header().Clone()
	}
	w.s.body = append(w.s.body, p...)
	w.mu.Unlock()
	return w.ResponseWriter.Write(p)
}

func (w *tapWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// startSim serves the refund case (with faults) behind a tap.
func startSim(t testing.TB, faults string) (string, *tap) {
	t.Helper()
	sc, err := samples.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.ParseFaults(faults)
	if err != nil {
		t.Fatal(err)
	}
	// A fixed clock: runs straight and through the proxy compare byte for byte.
	fixed := func() time.Time { return time.Date(2026, 10, 20, 10, 0, 0, 0, time.UTC) }
	tp := &tap{h: sim.New(sim.Options{Scenario: sc, Lookup: samples.Lookup, Faults: f, Now: fixed})}
	srv := httptest.NewServer(tp)
	t.Cleanup(srv.Close)
	return srv.URL, tp
}

// rig is a proxy in front of a simulator, recording into its own DB.
type rig struct {
	t      testing.TB
	sim    *tap
	simURL string
	url    string // the proxy's base URL
	px     *Proxy
	srv    *httptest.Server
	db     *store.DB
	dbPath string
	closed bool
}

func newRig(t testing.TB, faults string, opts Options) *rig {
	t.Helper()
	r := &rig{t: t}
	r.simURL, r.sim = startSim(t, faults)
	r.dbPath = filepath.Join(t.TempDir(), "proxy.db")
	db, err := store.Open(r.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	r.db = db
	opts.Upstream, opts.Provider, opts.DB = r.simURL, adapters.ProviderSim, db
	r.px = New(opts)
	r.srv = httptest.NewServer(r.px)
	r.url = r.srv.URL
	t.Cleanup(r.close)
	return r
}

// close stops the proxy and ends its sessions (the database stays open).
func (r *rig) close() {
	if r.closed {
		return
	}
	r.closed = true
	r.srv.Close()
	if err := r.px.Close(); err != nil {
		r.t.Errorf("closing the proxy: %v", err)
	}
	_ = r.db.Close()
}

// stop ends the recording and returns the proxy's sessions, oldest first,
// read from a fresh handle on the database.
func (r *rig) stop() []*store.Session {
	r.t.Helper()
	r.close()
	db, err := store.Open(r.dbPath)
	if err != nil {
		r.t.Fatal(err)
	}
	defer db.Close()
	list, err := db.ListSessions(store.Filter{})
	if err != nil {
		r.t.Fatal(err)
	}
	var out []*store.Session
	for i := len(list) - 1; i >= 0; i-- {
		s, err := db.GetSession(list[i].ID)
		if err != nil {
			r.t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// entries reads a session's timeline.
func (r *rig) entries(id string) []store.Entry {
	r.t.Helper()
	db, err := store.Open(r.dbPath)
	if err != nil {
		r.t.Fatal(err)
	}
	defer db.Close()
	es, err := db.Events(id, 1, 0)
	if err != nil {
		r.t.Fatal(err)
	}
	return es
}

// rawEvents counts the raw events of a response as the simulator sent
// it: SSE events read as the protocol frames them (a cut tail is no
// event), or one for a whole body.
func rawEvents(t testing.TB, protocol string, s *sent) int {
	t.Helper()
	if !strings.HasPrefix(s.header.Get("Content-Type"), "text/event-stream") {
		return 1
	}
	p, err := registry.Lookup(protocol)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	_ = adapters.ReadStream(p, adapters.NewStream(p), bytes.NewReader(s.body), func(st adapters.Step) error {
		if st.Index >= 0 {
			n++
		}
		return nil
	})
	return n
}

// bodyTap is an SDK's transport that keeps every response body the SDK
// read, byte for byte.
type bodyTap struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (b *bodyTap) client() *http.Client { return &http.Client{Transport: b} }

func (b *bodyTap) RoundTrip(r *http.Request) (*http.Response, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableCompression = true
	resp, err := tr.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	i := len(b.bodies)
	b.bodies = append(b.bodies, nil)
	b.mu.Unlock()
	resp.Body = &keepBody{rc: resp.Body, keep: func(p []byte) {
		b.mu.Lock()
		b.bodies[i] = append(b.bodies[i], p...)
		b.mu.Unlock()
	}}
	return resp, nil
}

func (b *bodyTap) all() [][]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([][]byte(nil), b.bodies...)
}

type keepBody struct {
	rc   io.ReadCloser
	keep func([]byte)
}

func (k *keepBody) Read(p []byte) (int, error) {
	n, err := k.rc.Read(p)
	if n > 0 {
		k.keep(p[:n])
	}
	return n, err
}

func (k *keepBody) Close() error { return k.rc.Close() }

// refundCase is the refund scenario with what an SDK user writes from it.
type refundCase struct {
	sc     *session.Scenario
	system string
	task   string
}

func refund(t testing.TB) refundCase {
	t.Helper()
	sc, err := samples.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	rc := refundCase{sc: sc}
	rc.system, rc.task = adapterstest.SDKPrompt(sc.Sources)
	return rc
}

// result runs a tool of the case, as the application would.
func (rc refundCase) result(name string, args []byte) string {
	out, _ := rc.sc.RunTool(context.Background(), name, args)
	return out
}

func lookup(protocol string) (adapters.Protocol, error) { return registry.Lookup(protocol) }
