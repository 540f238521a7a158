package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/proxy"
	"github.com/modelwire/modelwire/store"
)

// The in-process proxy rig: an upstream, a recording proxy and a bare
// reverse proxy in this process, for the package's Go benchmarks and
// tests (BenchmarkProxyPaced, BenchmarkProxyRecord). The proxy group's
// table runs each proxy as a child process instead (hop.go).
const proxyStreams = 50

func side(proxied bool) string {
	if proxied {
		return "through the proxy"
	}
	return "direct"
}

// proxyRig is the upstream, the proxy's listener and the client the rows
// share. Each proxied run gets a fresh recording proxy behind the same
// listener (so connections stay warm), closed at the run's end: its CPU
// then includes recording every event the run forwarded.
type proxyRig struct {
	dir   string
	up    *upstream
	upSrv *httptest.Server
	db    *store.DB
	px    atomic.Pointer[proxy.Proxy]
	pxSrv *httptest.Server
	// bareSrv is net/http/httputil's reverse proxy to the upstream: a hop
	// that records nothing, the reference for what a hop costs.
	bareSrv *httptest.Server
	client  *http.Client
}

func newProxyRig() (*proxyRig, error) {
	dir, err := os.MkdirTemp("", "modelwire-bench-")
	if err != nil {
		return nil, err
	}
	db, err := store.Open(filepath.Join(dir, "proxy.db"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	g := &proxyRig{dir: dir, db: db, up: newUpstream()}
	g.upSrv = httptest.NewServer(g.up)
	u, _ := url.Parse(g.upSrv.URL)
	bare := httputil.NewSingleHostReverseProxy(u)
	bare.FlushInterval = -1 // flush each write, as modelwire's proxy does
	g.bareSrv = httptest.NewServer(bare)
	g.pxSrv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { g.px.Load().ServeHTTP(w, r) }))
	g.client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: proxyStreams * 2}}
	return g, nil
}

func (g *proxyRig) Close() {
	g.pxSrv.Close()
	g.bareSrv.Close()
	g.upSrv.Close()
	_ = g.db.Close()
	os.RemoveAll(g.dir)
}

// measured is one run: its wall time (to the client's last byte), the
// process CPU it used (recording included) and how long the recording
// went on after the last byte.
type measured struct{ wall, cpu, lag time.Duration }

// measure runs f against the upstream, directly or through a fresh
// recording proxy that it closes (waiting for its recordings) afterwards.
func (g *proxyRig) measure(proxied bool, f func(base string) error) (measured, error) {
	base := g.upSrv.URL
	var px *proxy.Proxy
	if proxied {
		px = proxy.New(proxy.Options{Upstream: g.upSrv.URL, DB: g.db})
		g.px.Store(px)
		base = g.pxSrv.URL
	}
	cpu0, _ := processCPU()
	start := time.Now()
	err := f(base)
	var m measured
	m.wall = time.Since(start)
	if px != nil {
		if cerr := px.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("recording: %w", cerr)
		}
		m.lag = time.Since(start) - m.wall
	}
	cpu1, _ := processCPU()
	m.cpu = cpu1 - cpu0
	return m, err
}

// The proxy rows' workload is Chat Completions: the upstream writes Chat
// chunks, the client posts chatBody to chatPath. Its protocol is the one
// the registry routes chatPath to (chatProtocol), not a name written here.
const (
	chatPath = "/v1/chat/completions"
	chatBody = `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`
)

// chatProtocol is the protocol spoken at chatPath, whose captures the
// paced-by-bytes and firehose rows serve (and the start-up rows decode,
// so they measure the same stream as before).
func chatProtocol() string {
	d, _ := registry.Route(http.MethodPost, chatPath, "")
	return d.Name
}

func post(ctx context.Context, c *http.Client, base string, h ...string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", base+chatPath, strings.NewReader(chatBody))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer sk-bench")
	for i := 0; i+1 < len(h); i += 2 {
		req.Header.Set(h[i], h[i+1])
	}
	resp, err := c.Do(req)
	if err == nil && resp.StatusCode != 200 {
		resp.Body.Close()
		err = fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return resp, err
}

// PacedRun runs streams paced streams of events chunks, interval apart,
// against base, and returns every event's latency: from the upstream's
// stamp, taken as it writes the event, to the client reading the event's
// end. Stream s starts s/streams of an interval after the first, so that
// the streams' events interleave as independent ones do, not in bursts of
// streams at once.
func PacedRun(ctx context.Context, c *http.Client, base string, streams, events int, interval time.Duration) ([]time.Duration, error) {
	spec := fmt.Sprintf("%d/%s", events, interval)
	all := make([][]time.Duration, streams)
	errs := make([]error, streams)
	var wg sync.WaitGroup
	start := time.Now()
	for s := range streams {
		wg.Go(func() {
			if !sleepUntil(ctx, time.NewTimer(time.Hour), start.Add(interval*time.Duration(s)/time.Duration(streams))) {
				errs[s] = ctx.Err()
				return
			}
			all[s], errs[s] = paced(ctx, c, base, spec, events)
		})
	}
	wg.Wait()
	var out []time.Duration
	for s := range streams {
		if errs[s] != nil {
			return nil, fmt.Errorf("stream %d: %w", s, errs[s])
		}
		out = append(out, all[s]...)
	}
	return out, nil
}

var stampKey = []byte(`"system_fingerprint":"fp_`)

func paced(ctx context.Context, c *http.Client, base, spec string, events int) ([]time.Duration, error) {
	resp, err := post(ctx, c, base, "X-Bench-Paced", spec)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	lat := make([]time.Duration, 0, events)
	stamp := time.Duration(-1)
	for len(lat) < events {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return lat, fmt.Errorf("after %d events: %v", len(lat), err)
		}
		if len(line) == 1 { // the blank line that ends an event
			now := time.Since(epoch)
			if stamp < 0 {
				return lat, fmt.Errorf("event %d has no stamp", len(lat))
			}
			lat = append(lat, now-stamp)
			stamp = -1
			continue
		}
		if i := bytes.Index(line, stampKey); i >= 0 && len(line) >= i+len(stampKey)+16 {
			v, err := strconv.ParseUint(string(line[i+len(stampKey):i+len(stampKey)+16]), 16, 64)
			if err != nil {
				return lat, fmt.Errorf("event %d: stamp: %v", len(lat), err)
			}
			stamp = time.Duration(v)
		}
	}
	_, err = io.Copy(io.Discard, br)
	return lat, err
}

// FirehoseRun reads streams copies of the upstream's body at once from
// base, each size bytes, sent at rate bytes a second per stream (0: in
// one write, as fast as the client reads), and returns when the last
// one has ended.
func FirehoseRun(ctx context.Context, c *http.Client, base string, streams, size, rate int) error {
	errs := make(chan error, streams)
	var wg sync.WaitGroup
	for range streams {
		wg.Go(func() {
			resp, err := post(ctx, c, base, "X-Bench-Rate", strconv.Itoa(rate))
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			n, err := io.Copy(io.Discard, resp.Body)
			if err == nil && int(n) != size {
				err = fmt.Errorf("read %d of %d bytes", n, size)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
