package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/proxy"
	"github.com/modelwire/modelwire/store"
)

// The proxy group runs the same streams straight to an upstream and
// through a recording proxy (decoding, the SQLite store), on loopback.
const (
	proxyStreams = 50
	// lockstepEvents per stream: the upstream writes event i+1 only once
	// the client has read event i, so each event's time is one transit,
	// upstream → client, never a share of a burst.
	lockstepEvents = 200
	// firehoseBytes per stream for throughput: the upstream writes as
	// fast as the client reads.
	firehoseBytes = 2 << 20
)

func proxyRows(ctx context.Context, o Options) ([]Row, error) {
	dir, err := os.MkdirTemp("", "modelwire-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	firehose, err := Capture(adapters.OpenAIChat, firehoseBytes)
	if err != nil {
		return nil, err
	}
	up := newUpstream(firehose)
	upSrv := httptest.NewServer(up)
	defer upSrv.Close()
	db, err := store.Open(filepath.Join(dir, "proxy.db"))
	if err != nil {
		return nil, err
	}
	defer db.Close()
	px := proxy.New(proxy.Options{Upstream: upSrv.URL, DB: db})
	pxSrv := httptest.NewServer(px)
	defer func() { pxSrv.Close(); _ = px.Close() }()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: proxyStreams * 2}}

	var direct, proxied []time.Duration
	var tDirect, tProxied time.Duration
	for r := range 2 { // alternate, so load on the machine hits both
		o.progress("proxy: %d lock-step streams, round %d of 2", proxyStreams, r+1)
		d, err := lockstepRun(ctx, client, upSrv.URL, up)
		if err != nil {
			return nil, fmt.Errorf("direct: %w", err)
		}
		p, err := lockstepRun(ctx, client, pxSrv.URL, up)
		if err != nil {
			return nil, fmt.Errorf("through the proxy: %w", err)
		}
		direct, proxied = append(direct, d...), append(proxied, p...)
		o.progress("proxy: %d streams of %d MB, round %d of 2", proxyStreams, firehoseBytes>>20, r+1)
		td, err := firehoseRun(ctx, client, upSrv.URL, len(firehose))
		if err != nil {
			return nil, fmt.Errorf("direct: %w", err)
		}
		tp, err := firehoseRun(ctx, client, pxSrv.URL, len(firehose))
		if err != nil {
			return nil, fmt.Errorf("through the proxy: %w", err)
		}
		if r == 0 || td < tDirect {
			tDirect = td
		}
		if r == 0 || tp < tProxied {
			tProxied = tp
		}
	}
	slices.Sort(direct)
	slices.Sort(proxied)
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }
	p99d, p99p := us(percentile(direct, 99)), us(percentile(proxied, 99))
	added := p99p - p99d
	mbs := func(d time.Duration) float64 { return float64(proxyStreams*len(firehose)) / (1 << 20) / d.Seconds() }
	tput := mbs(tProxied) / mbs(tDirect)
	return []Row{
		{Group: "proxy", Path: fmt.Sprintf("added latency per event, p99, %d streams", proxyStreams), Unit: "µs", Ours: added,
			RefName: "direct p99", Ref: p99d, Ratio: math.NaN(), Target: "≤ 50 µs", Checked: true, Met: added <= 50,
			Note: fmt.Sprintf("p99 through the proxy %.0f µs; p50 %.0f vs %.0f µs", p99p, us(percentile(proxied, 50)), us(percentile(direct, 50)))},
		{Group: "proxy", Path: fmt.Sprintf("throughput, %d streams", proxyStreams), Unit: "MB/s", Ours: mbs(tProxied),
			RefName: "direct", Ref: mbs(tDirect), Ratio: tput, Target: "≥ 0.9× direct", Checked: true, Met: tput >= 0.9},
	}, nil
}

// upstream serves /lockstep/ID streams, whose events wait for the client's
// ack, and any other path as the firehose capture at full speed.
type upstream struct {
	firehose []byte
	mu       sync.Mutex
	acks     map[string]chan struct{}
}

func newUpstream(firehose []byte) *upstream {
	return &upstream{firehose: firehose, acks: map[string]chan struct{}{}}
}

func (u *upstream) ack(id string) chan struct{} {
	u.mu.Lock()
	defer u.mu.Unlock()
	c := u.acks[id]
	if c == nil {
		c = make(chan struct{})
		u.acks[id] = c
	}
	return c
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	id := r.Header.Get("X-Bench-Stream")
	if id == "" {
		_, _ = w.Write(u.firehose)
		return
	}
	ack := u.ack(id)
	f := w.(http.Flusher)
	for i := range lockstepEvents {
		if i > 0 {
			select {
			case <-ack:
			case <-r.Context().Done():
				return
			}
		}
		fmt.Fprintf(w, `data: {"id":"chatcmpl-b","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"token %d "},"finish_reason":null}]}`+"\n\n", i)
		f.Flush()
	}
	<-ack
	fmt.Fprint(w, `data: {"id":"chatcmpl-b","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	f.Flush()
}

const chatBody = `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`

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
	req, err := http.NewRequestWithContext(ctx, "POST", base+"/v1/chat/completions", strings.NewReader(chatBody))
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Bench-Stream", id)
	req.Header.Set("Authorization", "Bearer sk-bench")
	resp, err := c.Do(req)
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

// firehoseRun reads proxyStreams full-speed streams at once and returns
// the time until the last one ends.
func firehoseRun(ctx context.Context, c *http.Client, base string, size int) (time.Duration, error) {
	errs := make(chan error, proxyStreams)
	var wg sync.WaitGroup
	start := time.Now()
	for range proxyStreams {
		wg.Go(func() {
			req, err := http.NewRequestWithContext(ctx, "POST", base+"/v1/chat/completions", strings.NewReader(chatBody))
			if err != nil {
				errs <- err
				return
			}
			resp, err := c.Do(req)
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
	el := time.Since(start)
	close(errs)
	for err := range errs {
		if err != nil {
			return 0, err
		}
	}
	return el, nil
}
