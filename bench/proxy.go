package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/proxy"
	"github.com/modelwire/modelwire/store"
)

// The proxy group answers "does putting modelwire's proxy between my app
// and the provider slow my streams?" with the same streams run straight to
// an upstream and through a recording proxy (decoding, the SQLite store),
// on loopback, alternately, in one process.
//
// The target rows pace the upstream as a provider is paced. An LLM
// stream's events come as the model makes them, tens to a few hundred a
// second, so the paced rows stream Chat chunks at 100 events/s on each
// of 50 streams (5,000 events/s through the proxy), each stamped by the
// upstream when it writes it and timed at the client's read; and for
// throughput, streams whose upstream sends at most a fixed number of bytes
// a second, like a real link. Neither saturates the CPU, so the
// difference direct → proxied is what the proxy adds, not a wait for a
// core.
//
// The saturated rows are kept, labelled so: lock-step streams (each event
// released the moment the previous one is read) and a firehose (2 MB a
// stream, written at once). They keep two cores busy with the upstream,
// the clients and, through the proxy, the recording of every event, so
// their times measure CPU, not transit; the CPU each path used per event
// or MB stands beside them.
const (
	proxyStreams = 50
	// pacedEvents per stream at pacedInterval: 3 s of a chat at 100
	// events/s, a few hundred events as a long answer has.
	pacedEvents   = 300
	pacedInterval = 10 * time.Millisecond
	// pacedRounds alternate direct and proxied; every event of every
	// round counts in the percentiles.
	pacedRounds = 3
	// linkRate is a paced stream's bytes per second: 1 MB/s is ~2,000
	// tokens/s of ~500-byte events, above the fastest hosted models; a
	// provider's stream is tens of KB/s. linkBytes per stream.
	linkRate  = 1 << 20
	linkBytes = 2 << 20
	// lockstepEvents per stream: the upstream writes event i+1 only once
	// the client has read event i.
	lockstepEvents = 200
	// firehoseBytes per stream: the upstream writes them in one Write.
	firehoseBytes = 2 << 20
)

func proxyRows(ctx context.Context, o Options) ([]Row, error) {
	g, err := newProxyRig()
	if err != nil {
		return nil, err
	}
	defer g.Close()
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }

	// Paced: latency per event.
	var pd, pp, pb []time.Duration
	var pdCPU, ppCPU time.Duration
	for r := range pacedRounds {
		o.progress("proxy: %d paced streams of %d events at %d/s, round %d of %d", proxyStreams, pacedEvents, time.Second/pacedInterval, r+1, pacedRounds)
		// The same streams through a bare reverse proxy: what one more hop
		// costs on this machine, before any recording.
		lat, err := PacedRun(ctx, g.client, g.bareSrv.URL, proxyStreams, pacedEvents, pacedInterval)
		if err != nil {
			return nil, fmt.Errorf("paced, bare reverse proxy: %w", err)
		}
		pb = append(pb, lat...)
		for _, proxied := range []bool{false, true} {
			var lat []time.Duration
			m, err := g.measure(proxied, func(base string) (err error) {
				lat, err = PacedRun(ctx, g.client, base, proxyStreams, pacedEvents, pacedInterval)
				return err
			})
			if err != nil {
				return nil, fmt.Errorf("paced, %s: %w", side(proxied), err)
			}
			if proxied {
				pp, ppCPU = append(pp, lat...), ppCPU+m.cpu
			} else {
				pd, pdCPU = append(pd, lat...), pdCPU+m.cpu
			}
		}
	}
	slices.Sort(pd)
	slices.Sort(pp)
	slices.Sort(pb)
	p99d, p99p, p99b := us(percentile(pd, 99)), us(percentile(pp, 99)), us(percentile(pb, 99))
	added := p99p - p99d
	perEvent := func(cpu time.Duration, n int) float64 { return us(cpu) / float64(n) }

	// Paced: throughput of bandwidth-bound streams.
	link, err := Capture(chatProtocol(), linkBytes)
	if err != nil {
		return nil, err
	}
	g.up.setBody(link)
	var ld, lp measured
	for r := range 2 {
		o.progress("proxy: %d streams of %d MB at %d MB/s each, round %d of 2", proxyStreams, linkBytes>>20, linkRate>>20, r+1)
		if ld, err = g.best(ld, false, func(base string) error { return FirehoseRun(ctx, g.client, base, proxyStreams, len(link), linkRate) }); err != nil {
			return nil, err
		}
		if lp, err = g.best(lp, true, func(base string) error { return FirehoseRun(ctx, g.client, base, proxyStreams, len(link), linkRate) }); err != nil {
			return nil, err
		}
	}
	linkMB := float64(proxyStreams*len(link)) / (1 << 20)

	// Saturated: lock-step and firehose.
	firehose, err := Capture(chatProtocol(), firehoseBytes)
	if err != nil {
		return nil, err
	}
	g.up.setBody(firehose)
	var ld2, lp2 []time.Duration
	var lsd, lsp time.Duration
	var fd, fp measured
	for r := range 2 {
		o.progress("proxy, saturated: %d lock-step streams, round %d of 2", proxyStreams, r+1)
		for _, proxied := range []bool{false, true} {
			var lat []time.Duration
			m, err := g.measure(proxied, func(base string) (err error) {
				lat, err = lockstepRun(ctx, g.client, base, g.up)
				return err
			})
			if err != nil {
				return nil, fmt.Errorf("lock-step, %s: %w", side(proxied), err)
			}
			if proxied {
				lp2, lsp = append(lp2, lat...), lsp+m.cpu
			} else {
				ld2, lsd = append(ld2, lat...), lsd+m.cpu
			}
		}
		o.progress("proxy, saturated: %d streams of %d MB at full speed, round %d of 2", proxyStreams, firehoseBytes>>20, r+1)
		if fd, err = g.best(fd, false, func(base string) error { return FirehoseRun(ctx, g.client, base, proxyStreams, len(firehose), 0) }); err != nil {
			return nil, err
		}
		if fp, err = g.best(fp, true, func(base string) error { return FirehoseRun(ctx, g.client, base, proxyStreams, len(firehose), 0) }); err != nil {
			return nil, err
		}
	}
	slices.Sort(ld2)
	slices.Sort(lp2)
	fireMB := float64(proxyStreams*len(firehose)) / (1 << 20)
	lsAdded := us(percentile(lp2, 99)) - us(percentile(ld2, 99))

	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return []Row{
		{Group: "proxy", Path: fmt.Sprintf("paced: added latency per event, p99, %d streams × %d events/s", proxyStreams, time.Second/pacedInterval),
			Unit: "µs", Ours: added, RefName: "direct p99", Ref: p99d, Ratio: math.NaN(), Target: "≤ 50 µs", Checked: true, Met: added <= 50,
			Note: fmt.Sprintf("upstream write → client read, %d events a side; through the proxy / direct: p50 %.0f / %.0f µs, p99 %.0f / %.0f, p99.9 %.0f / %.0f, max %.0f / %.0f; CPU %.1f / %.1f µs per event",
				len(pp), us(percentile(pp, 50)), us(percentile(pd, 50)), p99p, p99d, us(percentile(pp, 99.9)), us(percentile(pd, 99.9)),
				us(pp[len(pp)-1]), us(pd[len(pd)-1]), perEvent(ppCPU, len(pp)), perEvent(pdCPU, len(pd)))},
		{Group: "proxy", Path: fmt.Sprintf("paced: a bare reverse proxy's added latency, p99, %d streams × %d events/s", proxyStreams, time.Second/pacedInterval),
			Unit: "µs", Ours: p99b - p99d, RefName: "direct p99", Ref: p99d, Ratio: math.NaN(), Target: "reference: one hop",
			Note: fmt.Sprintf("net/http/httputil.ReverseProxy, flushing each write, recording nothing: what one more hop costs here; p50 %.0f / %.0f µs, p99.9 %.0f / %.0f through it / direct",
				us(percentile(pb, 50)), us(percentile(pd, 50)), us(percentile(pb, 99.9)), us(percentile(pd, 99.9)))},
		{Group: "proxy", Path: fmt.Sprintf("paced: throughput, %d streams at %d MB/s each", proxyStreams, linkRate>>20),
			Unit: "MB/s", Ours: linkMB / lp.wall.Seconds(), RefName: "direct", Ref: linkMB / ld.wall.Seconds(),
			Ratio: ld.wall.Seconds() / lp.wall.Seconds(), Target: "≥ 0.9× direct", Checked: true, Met: ld.wall.Seconds()/lp.wall.Seconds() >= 0.9,
			Note: fmt.Sprintf("bytes delivered, best of 2; CPU %.1f / %.1f ms per MB through the proxy / direct; recorded %.0f ms after the last byte",
				ms(lp.cpu)/linkMB, ms(ld.cpu)/linkMB, ms(lp.lag))},
		{Group: "proxy", Path: fmt.Sprintf("saturated (CPU-bound): lock-step added latency, p99, %d streams", proxyStreams),
			Unit: "µs", Ours: lsAdded, RefName: "direct p99", Ref: us(percentile(ld2, 99)), Ratio: math.NaN(), Target: "informational",
			Note: fmt.Sprintf("each event released when the last is read; p50 %.0f / %.0f µs; CPU %.1f / %.1f µs per event through the proxy / direct",
				us(percentile(lp2, 50)), us(percentile(ld2, 50)), perEvent(lsp, len(lp2)), perEvent(lsd, len(ld2)))},
		{Group: "proxy", Path: fmt.Sprintf("saturated (CPU-bound): firehose throughput, %d streams × %d MB", proxyStreams, firehoseBytes>>20),
			Unit: "MB/s", Ours: fireMB / fp.wall.Seconds(), RefName: "direct", Ref: fireMB / fd.wall.Seconds(), Ratio: fd.wall.Seconds() / fp.wall.Seconds(),
			Target: "informational",
			Note: fmt.Sprintf("best of 2; CPU %.1f / %.1f ms per MB through the proxy (forwarded and recorded) / direct; recorded %.0f ms after the last byte",
				ms(fp.cpu)/fireMB, ms(fd.cpu)/fireMB, ms(fp.lag))},
	}, nil
}

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

// best runs f once more and keeps the faster of it and prev.
func (g *proxyRig) best(prev measured, proxied bool, f func(base string) error) (measured, error) {
	m, err := g.measure(proxied, f)
	if err != nil {
		return prev, fmt.Errorf("%s: %w", side(proxied), err)
	}
	if prev.wall == 0 || m.wall < prev.wall {
		return m, nil
	}
	return prev, nil
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

// lockstepRun runs proxyStreams lock-step streams at once against base and
// returns every event's transit time: from the ack that releases it to
// the client reading it.
func lockstepRun(ctx context.Context, c *http.Client, base string, up *upstream) ([]time.Duration, error) {
	var mu sync.Mutex
	var all []time.Duration
	errs := make(chan error, proxyStreams)
	var wg sync.WaitGroup
	for s := range proxyStreams {
		wg.Go(func() {
			id := fmt.Sprintf("%s-%d-%d", base, s, time.Now().UnixNano())
			ts, err := lockstep(ctx, c, base, id, up.ack(id))
			mu.Lock()
			all = append(all, ts...)
			mu.Unlock()
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return all, nil
}

func lockstep(ctx context.Context, c *http.Client, base, id string, ack chan struct{}) ([]time.Duration, error) {
	resp, err := post(ctx, c, base, "X-Bench-Stream", id)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	ts := make([]time.Duration, 0, lockstepEvents)
	var sent time.Time
	for n := 0; n < lockstepEvents; {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return ts, fmt.Errorf("after %d events: %v", n, err)
		}
		if len(line) != 1 { // not the blank line that ends an event
			continue
		}
		if n > 0 {
			ts = append(ts, time.Since(sent))
		}
		n++
		sent = time.Now()
		ack <- struct{}{}
	}
	_, err = io.Copy(io.Discard, br)
	return ts, err
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
