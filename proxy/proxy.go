// Package proxy is modelwire's record mode: an HTTP handler that sits
// between any application and its LLM provider, forwards every request
// and response byte for byte (streams flushed event by event as they
// arrive), and records what passes — decoded with the adapters, reduced,
// validated, one stored session per conversation — as the same
// session.Update values a scenario run produces, so that the store and
// the workbench take a recording exactly as they take a run.
package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/modelwire/modelwire/background"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelwire/modelwire/redact"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
)

// Options configure a proxy.
type Options struct {
	// Upstream is the base URL every request is forwarded to (a gateway,
	// DeepSeek, a local Ollama or vLLM, the simulator); "" chooses the
	// provider from the request's path (see classify).
	Upstream string
	// Provider names the upstream in the session list; "" derives it from
	// the host (openai, anthropic, gemini, deepseek, else compatible).
	Provider string
	// DB records the sessions; nil records nothing (the observer still
	// sees every update).
	DB *store.DB
	// Observe receives every update of every exchange, in order per
	// exchange, from the recording goroutines: it must be safe for
	// concurrent use. It never runs on the path that serves the client.
	Observe session.Observer
	// Hold, when set, turns hold mode on: a response that proposes tool
	// calls is buffered whole and passed on only once Hold approves each
	// call; a rejection replaces it with the provider's error, an edit
	// re-encodes it with the edited arguments (rewrite.go). Decisions are
	// asked one at a time.
	Hold session.Decider
	// HoldByRuleOnly: Hold is there for the rules' hold actions only
	// (--rules without --hold-tools): no other response is held for it.
	HoldByRuleOnly bool
	// Rules, when set, edit, replace, fault, delay or hold what matches
	// (rules.go); the set may be reloaded while the proxy runs.
	Rules *RuleSet
	// Replay plays a stored session back as the upstream, for a replace
	// rule (cli wires vcr's tape: request matched by body, bytes as
	// recorded). nil: a replace rule answers 502.
	Replay func(sessionID string) (http.Handler, error)
	// HoldRequest asks a person about a request a hold rule matched.
	HoldRequest RequestHolder
	// Client forwards the requests; nil builds one (NewClient).
	Client *http.Client
	// MaxDecoded bounds a whole (non-stream) response body as the
	// recorder decodes it, after decompression: a larger one is forwarded
	// untouched and recorded as too large to decode. 0 means
	// DefaultMaxDecoded.
	MaxDecoded int64
	// MaxStreamText bounds the content (text, reasoning, arguments) a
	// stream's recording reduces: past it the rest of the stream is
	// forwarded, not recorded. 0 means DefaultMaxStreamText.
	MaxStreamText int64
	// MaxInflate bounds how many times its compressed size a gzip or
	// deflate body may inflate to (past the first MiB): beyond it the
	// body is a decompression bomb, forwarded untouched and recorded as
	// too large to decode. 0 means DefaultMaxInflate.
	MaxInflate int64
	// RequestBudget bounds the request bodies held in memory at once,
	// from their read until they are sent and recorded (see budget); 0
	// means DefaultRequestBudget.
	RequestBudget int64
	// BodyRules, when set, remove personal data from every recorded copy
	// of an exchange (request and response bodies, a stream's events and
	// text, across its events); see bodyredact.go.
	BodyRules *redact.BodyRules
	// Version is recorded with each session.
	Version string
	Log     *slog.Logger
}

// Proxy is the recording proxy. Close it to end its sessions.
type Proxy struct {
	opts   Options
	client *http.Client
	log    *slog.Logger

	mu         sync.Mutex
	cond       *sync.Cond // broadcast when a recording ends
	convs      []*conversation
	all        []*conversation
	byResponse map[string]*conversation
	unknown    *conversation
	next       int
	inflight   int // recordings still decoding

	// recorders are the loops the recordings run on (recorders.go), one
	// fewer than the cores (at least one): a recorder is CPU-bound, the
	// copy to the client is not, and fifty recorders catching up on a
	// burst would keep every core.
	recorders []*background.Loop
	nextLoop  atomic.Uint32
	stopLoops sync.Once
	// bodies bounds the request bodies held at once (RequestBudget).
	bodies *budget

	wg     sync.WaitGroup // recording goroutines
	holdMu sync.Mutex     // one hold decision at a time
	errMu  sync.Mutex
	errs   int // recording errors logged

	// stopping is why the proxy is stopping (a signal's cause), set by
	// Stopping before the server cuts the exchanges in flight.
	stopping atomic.Pointer[string]
}

// Stopping tells the proxy it is being stopped and why (the signal):
// exchanges cut from here on record that reason instead of a client that
// went away.
func (p *Proxy) Stopping(why error) {
	if why != nil {
		s := why.Error()
		p.stopping.Store(&s)
	}
}

func (p *Proxy) stopReason() string {
	if s := p.stopping.Load(); s != nil {
		return *s
	}
	return ""
}

// New builds a proxy.
func New(opts Options) *Proxy {
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c := opts.Client
	if c == nil {
		c = NewClient()
	}
	if opts.MaxDecoded <= 0 {
		opts.MaxDecoded = DefaultMaxDecoded
	}
	if opts.MaxStreamText <= 0 {
		opts.MaxStreamText = DefaultMaxStreamText
	}
	if opts.MaxInflate <= 0 {
		opts.MaxInflate = DefaultMaxInflate
	}
	if opts.RequestBudget <= 0 {
		opts.RequestBudget = DefaultRequestBudget
	}
	p := &Proxy{opts: opts, client: c, log: opts.Log, byResponse: map[string]*conversation{},
		recorders: startRecorders(), bodies: newBudget(opts.RequestBudget)}
	p.cond = sync.NewCond(&p.mu)
	return p
}

// NewClient is the proxy's upstream client. Its transport never adds an
// Accept-Encoding of its own (DisableCompression), so a body reaches the
// client encoded exactly as the upstream sent it; it follows no
// redirects (the client sees them); it has no overall timeout (that would
// cut streams); it keeps plenty of idle connections for loopback load.
func NewClient() *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
		ForceAttemptHTTP2:     true,
		DisableCompression:    true,
	}
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// The bounds on what the recorder decodes (Options.MaxDecoded,
// Options.MaxInflate): a response is never held whole past them, whatever
// the upstream sends.
const (
	DefaultMaxDecoded = 64 << 20
	DefaultMaxInflate = 200
	// DefaultMaxStreamText is far past any model's output (128k tokens are
	// about half a MiB of text), and what the reducers hold of it stays
	// well inside the proxy's bound.
	DefaultMaxStreamText = 16 << 20
	// DefaultRequestBudget is Options.RequestBudget's default.
	DefaultRequestBudget = 32 << 20
	// inflateFloor is what any compressed body may inflate to, whatever
	// its ratio (a tiny body of repeated JSON compresses very well).
	inflateFloor = 1 << 20
)

// unbudgeted is how much of a body of unknown length is read before it
// waits for the request budget.
const unbudgeted = 1 << 20

// maxBody bounds the request body read into memory; a larger one is
// forwarded as it streams in and recorded without its body.
const maxBody = 64 << 20

// ServeHTTP forwards one request and records the exchange.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		// modelwire is a reverse proxy for base URLs, never a tunnel to a
		// host the request names.
		writeJSONError(w, http.StatusMethodNotAllowed, "modelwire proxy: CONNECT is not supported; set the application's base URL to the proxy instead")
		return
	}
	// A body of a declared length is budgeted before it is read, one of
	// unknown length once read: either way no more than RequestBudget of
	// bodies are decoded and recorded at once.
	var share *bodyShare
	var buf *bytes.Buffer
	if n := r.ContentLength; n > 0 {
		n = min(n, maxBody+1)
		if !p.bodies.acquire(r.Context(), n) {
			return // the client went away while it waited
		}
		share = &bodyShare{b: p.bodies, n: n, left: 2}
		buf = bytes.NewBuffer(make([]byte, 0, n+1))
	} else {
		// Unknown length: the first MiB is read unbudgeted (most bodies end
		// there); a longer one waits for the budget before reading on.
		buf = new(bytes.Buffer)
		if _, err := buf.ReadFrom(io.LimitReader(r.Body, unbudgeted)); err == nil && buf.Len() == unbudgeted {
			if !p.bodies.acquire(r.Context(), maxBody+1) {
				return
			}
			share = &bodyShare{b: p.bodies, n: maxBody + 1, left: 2}
		}
	}
	_, err := buf.ReadFrom(io.LimitReader(r.Body, maxBody+1-int64(buf.Len())))
	body := buf.Bytes()
	if err != nil {
		share.done()
		share.done()
		http.Error(w, "modelwire proxy: reading the request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if share != nil && share.n > int64(len(body)) { // what was reserved and not read goes back now
		p.bodies.release(share.n - int64(len(body)))
		share.n = int64(len(body))
	}
	if share == nil && len(body) > 0 {
		if !p.bodies.acquire(r.Context(), int64(len(body))) {
			return
		}
		share = &bodyShare{b: p.bodies, n: int64(len(body)), left: 2}
	}
	// The handler's part of the share goes back once the body has gone
	// upstream (the response has begun), not when the response ends: a
	// long stream or a held response keeps no request body in the budget.
	sent := sync.OnceFunc(share.done)
	defer sent()
	var bodyReader io.Reader = bytes.NewReader(body)
	whole := len(body) <= maxBody
	if !whole {
		bodyReader = io.MultiReader(bytes.NewReader(body), r.Body)
	}
	x := p.begin(r, body, whole)
	x.share = share
	p.wg.Add(1)
	if x.target == "" {
		msg := fmt.Sprintf("modelwire proxy: no upstream for %s %s (not a path modelwire knows); pass --upstream", r.Method, r.URL.Path)
		x.noResponse(msg)
		writeJSONError(w, http.StatusBadGateway, msg)
		return
	}
	var ruled *http.Response
	if whole && x.req.protocol != "" {
		if x.attempt == 1 {
			x.carried()
		}
		gz := strings.EqualFold(strings.TrimSpace(r.Header.Get("Content-Encoding")), "gzip")
		body, ruled = p.requestRules(r, x, body, gz)
		bodyReader = bytes.NewReader(body)
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, x.target, bodyReader)
	if err != nil {
		x.noResponse("building the upstream request: " + err.Error())
		writeJSONError(w, http.StatusBadGateway, "modelwire proxy: "+err.Error())
		return
	}
	copyHeader(out.Header, r.Header)
	if _, ok := r.Header["User-Agent"]; !ok {
		out.Header["User-Agent"] = []string{""} // add none of Go's own
	}
	out.ContentLength = int64(len(body))
	if !whole {
		out.ContentLength = r.ContentLength
	}
	x.sent = time.Now()
	var resp *http.Response
	if ruled != nil {
		resp = ruled // a rule answers for the upstream
	} else {
		resp, err = p.client.Do(out)
	}
	sent()
	if err != nil {
		if r.Context().Err() != nil {
			x.noResponse("cancelled: the client went away before the response")
			return
		}
		msg := "cannot reach the upstream: " + err.Error()
		x.noResponse(msg)
		writeJSONError(w, http.StatusBadGateway, "modelwire proxy: "+msg)
		return
	}
	defer resp.Body.Close()
	firstByte := time.Now()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		x.markFailed(fmt.Sprintf("HTTP %d", resp.StatusCode))
	}
	sp := newSpool(spoolLimit)
	hold := x.holds(resp.StatusCode)
	x.held = hold
	status, header := resp.StatusCode, resp.Header.Clone()
	p.startRecording(sp, hold, func() { x.record(status, header, firstByte, sp, hold) })
	if hold {
		p.hold(w, r, x, resp, sp, body)
		return
	}
	if x.cut > 0 {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{&cutReader{r: resp.Body, left: x.cut}, resp.Body}
	}
	p.pass(w, r, x, resp, sp)
}

// pass copies the response to the client as it arrives: each chunk is
// written and flushed, then handed to the recorder. An upstream that
// breaks off mid-body breaks the client's response off the same way.
func (p *Proxy) pass(w http.ResponseWriter, r *http.Request, x *exchange, resp *http.Response, sp *spool) {
	copyHeader(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	buf := newChunk()
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			now := time.Now()
			if _, werr := w.Write(buf[:n]); werr != nil {
				sp.cancel()
				return
			}
			_ = rc.Flush()
			buf = sp.pass(buf, buf[:n], now)
		}
		if errors.Is(err, io.EOF) {
			sp.close(nil)
			copyTrailers(w, resp)
			return
		}
		if err != nil {
			if r.Context().Err() != nil {
				// The client went away (many close the connection right
				// after the last event): the upstream request was
				// cancelled with it; nothing is left to send.
				sp.cancel()
				return
			}
			x.markFailed("the stream broke: " + err.Error())
			sp.close(err)
			// End the client's response as the upstream's ended: cut.
			panic(http.ErrAbortHandler)
		}
	}
}

func copyTrailers(w http.ResponseWriter, resp *http.Response) {
	for k, vs := range resp.Trailer {
		for _, v := range vs {
			w.Header().Add(http.TrailerPrefix+k, v)
		}
	}
}

// writeJSONError answers for the proxy itself (no upstream response).
func writeJSONError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Modelwire-Proxy", "error")
	w.WriteHeader(status)
	b, _ := jsonMarshal(map[string]any{"error": map[string]any{"message": msg, "type": "proxy_error"}})
	_, _ = w.Write(b)
}

// Close waits for the recordings in flight and ends every session: done
// when each of its exchanges passed the layers it was judged on, failed
// otherwise. Call it after the server has stopped.
func (p *Proxy) Close() error {
	p.wg.Wait()
	p.stopLoops.Do(func() {
		for _, l := range p.recorders {
			l.Stop()
		}
	})
	p.mu.Lock()
	all := append([]*conversation(nil), p.all...)
	p.mu.Unlock()
	var errs []error
	for _, c := range all {
		if err := p.end(c); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// end finishes a conversation's session: done when each of its turns
// passed the layers it was judged on (a failed attempt mended by its
// retry counts as passed), failed otherwise.
func (p *Proxy) end(c *conversation) error {
	p.mu.Lock()
	if c.finished {
		p.mu.Unlock()
		return nil
	}
	c.finished = true
	failed := c.failed()
	p.mu.Unlock()
	if c.j == nil {
		return nil
	}
	status := store.StatusDone
	if failed {
		status = store.StatusFailed
	}
	if err := c.j.Finish(status); err != nil {
		return err
	}
	if p.opts.Observe != nil && c.id != "" {
		p.opts.Observe(session.Update{Kind: session.UpFinished, SessionID: c.id, Status: status, At: time.Now()})
	}
	return nil
}

// recordErr logs a recording failure (the first few, then every 100th):
// recording never fails an exchange.
func (p *Proxy) recordErr(err error) {
	p.errMu.Lock()
	p.errs++
	n := p.errs
	p.errMu.Unlock()
	if n <= 5 || n%100 == 0 {
		p.log.Error("recording an exchange", "err", redact.Text(err.Error()), "count", n)
	}
}

// upstreamFor is the base URL a request goes to ("" when none fits).
func (p *Proxy) upstreamFor(protocol, path string, h http.Header) string {
	if p.opts.Upstream != "" {
		return strings.TrimRight(p.opts.Upstream, "/")
	}
	return defaultUpstream(protocol, path, h)
}
