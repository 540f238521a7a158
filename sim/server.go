// Package sim is modelwire's built-in provider: a real HTTP server on
// loopback that answers every protocol exactly as the real providers do on
// the wire — real SSE bytes, their ids, their errors — from a scenario's
// script, with faults injected on demand. Any client works against it
// unchanged, official SDKs included.
package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf16"

	"golang.org/x/net/netutil"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/session"
)

// ScenarioHeader picks another scenario for one request (tests and
// workshops use it to run variants against one server).
const ScenarioHeader = "X-Modelwire-Scenario"

// Options configure a simulator.
type Options struct {
	// Scenario answers requests that do not name another.
	Scenario *session.Scenario
	// Lookup resolves ScenarioHeader values; nil disables the header.
	Lookup func(name string) (*session.Scenario, error)
	Faults *Faults
	// Delay is a fixed pause between stream events.
	Delay time.Duration
	// Pace paces stream content for people, in words a second: a turn's
	// words arrive at that rate (0: as fast as the connection goes).
	Pace float64
	// Hold, when set, stops a paced stream's clock while it is held (a
	// walkthrough paused on a step): see Hold.
	Hold *Hold
	// RequireKey makes a request without an API key, or with one other
	// than Keys[protocol] when that is set, get the provider's own
	// authentication error.
	RequireKey bool
	Keys       map[string]string
	// SlowFirstByte is how long the slow-first-byte fault waits.
	SlowFirstByte time.Duration
	// StallFor bounds the stall fault (it also ends when the client goes).
	StallFor time.Duration
	// Now is the clock responses are stamped with (created, created_at);
	// nil is the wall clock. Tests that compare two runs byte for byte
	// fix it.
	Now func() time.Time
	// KeepResponses is how many of its latest responses the server keeps
	// for previous_response_id (0: DefaultKeepResponses). An older one is
	// not found, as a provider's expired response is.
	KeepResponses int
	// BodyTimeout bounds reading one request's body, from the end of its
	// headers (0: DefaultBodyTimeout; negative: none). A client that
	// trickles its body holds a connection no longer than this.
	BodyTimeout time.Duration
	// MaxConns bounds the connections the server holds open at once (0:
	// DefaultMaxConns; negative: none); more wait to be accepted.
	MaxConns int
	// KeepBytes bounds the same responses by what they hold (the chain's
	// prompt, tool results and call names), 0: DefaultKeepBytes. The
	// oldest give way until the rest fit; a response larger than the
	// whole bound is not kept (continuing it is an unknown id).
	KeepBytes int64
	// Batch bounds the Files and Batch API (files.go).
	Batch BatchOptions
	// Workshop, when set, grades each request and serves WorkshopPath
	// (serve --workshop).
	Workshop Workshop
}

// Defaults for what a server open to a room must bound.
const (
	DefaultBodyTimeout = 30 * time.Second
	DefaultMaxConns    = 256
	// headerTimeout bounds reading a request's headers.
	headerTimeout = 10 * time.Second
	// idleTimeout closes a kept-alive connection that sends nothing.
	idleTimeout = 2 * time.Minute
)

// DefaultKeepResponses bounds the responses a server keeps: a workshop's
// day is a few thousand, and a server left running must not grow without
// end.
const DefaultKeepResponses = 10000

// DefaultKeepBytes bounds the bytes the kept responses hold: a client
// that sends large prompts cannot grow the server past it.
const DefaultKeepBytes = 256 << 20

// Server is the simulator.
type Server struct {
	opts Options
	seed atomic.Uint64

	mu        sync.Mutex
	responses map[string]storedResponse // Responses API ids it issued
	kept      []string                  // their ids, oldest first from kept[oldest], for the bounds
	oldest    int
	keptBytes int64           // what the kept responses hold (storedResponse.size)
	issued    map[string]bool // call ids it issued
	// suffixed is, per call id a model chose, the first suffix number
	// not yet tried, so a busy server does not probe every earlier
	// repeat again (that made a long run quadratic).
	suffixed map[string]int

	batches *batchStore // the Files and Batch API's (batch.go)
}

type storedResponse struct {
	depth   int                   // model turns up to and including this response
	stored  bool                  // store was not false: it can be continued
	results []adapters.ToolResult // every tool result the chain carried
	// prompt is what the chain's inputs said (top-level instructions
	// left out: the APIs do not carry them over to the next response).
	prompt []adapters.PromptPart
	calls  map[string]string // call_id → tool name, of every call the chain issued
	size   int64             // the bytes it holds, roughly (KeepBytes)
}

// sizeOf is roughly what a kept response holds.
func sizeOf(r storedResponse) int64 {
	n := int64(256)
	for _, p := range r.prompt {
		n += int64(len(p.Text)) + 32
	}
	for _, t := range r.results {
		n += int64(len(t.Content)+len(t.CallID)+len(t.Name)) + 64
	}
	for k, v := range r.calls {
		n += int64(len(k)+len(v)) + 48
	}
	return n
}

// chainChecker is a protocol with server-side state whose own words the
// server uses when a continuation does not hold: an unknown previous id,
// or a tool result that answers no call of the chain it continues.
type chainChecker interface {
	UnknownPrevious(id string) *adapters.SimError
	UnmatchedResult(callID string) *adapters.SimError
}

// New builds a simulator.
func New(opts Options) *Server {
	if opts.SlowFirstByte == 0 {
		opts.SlowFirstByte = 1500 * time.Millisecond
	}
	if opts.StallFor == 0 {
		opts.StallFor = 30 * time.Second
	}
	if opts.BodyTimeout == 0 {
		opts.BodyTimeout = DefaultBodyTimeout
	}
	if opts.MaxConns == 0 {
		opts.MaxConns = DefaultMaxConns
	}
	return &Server{opts: opts, responses: map[string]storedResponse{}, issued: map[string]bool{}, suffixed: map[string]int{},
		batches: newBatchStore(opts.Batch)}
}

func (s *Server) now() time.Time {
	if s.opts.Now != nil {
		return s.opts.Now()
	}
	return time.Now()
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	bodyDeadline(w, r, s.opts.BodyTimeout)
	if s.opts.Workshop != nil && strings.HasPrefix(r.URL.Path, WorkshopPath) {
		s.opts.Workshop.ServeWorkshop(w, r, ParticipantOf(r))
		return
	}
	if d, ok := registry.BatchRoute(r.URL.Path); ok {
		s.serveBatchAPI(w, r, d)
		return
	}
	if d, ok := registry.CountRoute(r.Method, r.URL.Path); ok {
		simp, ok := s.simulated(w, r, d.Name)
		if !ok {
			return
		}
		body, serr := readBody(r, simp)
		if serr != nil {
			writeError(w, serr)
			return
		}
		countTokens(w, d.Count, simp, body)
		return
	}
	if d, id, ok := registry.ModelsRoute(r.Method, r.URL.Path, r.Header); ok {
		s.serveModels(w, r, d, id)
		return
	}
	// The host is not read: the simulator answers on loopback, and a path
	// two protocols share is the one without a HostHint's.
	d, ok := registry.Route(r.Method, r.URL.Path, "")
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error":{"message":"Unknown request URL: %s %s. %s","type":"invalid_request_error","param":null,"code":"unknown_url"}}`, r.Method, jsonEscape(r.URL.Path), jsonEscape(served))
		return
	}
	if s.opts.Workshop != nil {
		c := &capture{ResponseWriter: w}
		defer c.answer()
		w = c
	}
	simp, ok := s.simulated(w, r, d.Name)
	if !ok {
		return
	}
	body, serr := readBody(r, simp)
	if serr == nil {
		serr = s.serve(w, r, simp, d, body)
	}
	if serr != nil {
		writeError(w, serr)
	}
}

// maxBody is the largest request body the simulator reads.
const maxBody = 32 << 20

// readBody reads the request body (in one allocation when the client says
// how long it is); a body over maxBody gets the provider's 413.
func readBody(r *http.Request, simp adapters.Simulated) ([]byte, *adapters.SimError) {
	var body []byte
	var err error
	if n := r.ContentLength; n >= 0 && n <= maxBody {
		body = make([]byte, n)
		_, err = io.ReadFull(r.Body, body)
	} else {
		body, err = io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	}
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			// The deadline stays: the connection is closed, not
			// drained of a body that is not coming.
			e := simp.ErrorResponse(http.StatusRequestTimeout, "invalid_request_error", "simulator: the request body did not arrive in time")
			e.Header = e.Header.Clone()
			if e.Header == nil {
				e.Header = http.Header{}
			}
			e.Header.Set("Connection", "close")
			return nil, e
		}
		return nil, simp.ErrorResponse(http.StatusBadRequest, "invalid_request_error", "simulator: reading the request body: "+err.Error())
	}
	if l, ok := r.Body.(*liftDeadline); ok {
		l.lift()
	}
	if len(body) > maxBody {
		return nil, simp.ErrorResponse(http.StatusRequestEntityTooLarge, "request_too_large", "Request exceeds the maximum allowed number of bytes.")
	}
	return body, nil
}

// serve answers a request to a protocol's endpoint: it checks the request
// as the provider does, lets the scenario's model answer, applies the
// faults and writes the response (or returns the error to answer with).
func (s *Server) serve(w http.ResponseWriter, r *http.Request, simp adapters.Simulated, d adapters.Descriptor, body []byte) *adapters.SimError {
	in, serr := simp.CheckRequest(r.Method, r.URL.RequestURI(), r.Header, body)
	if serr != nil {
		return s.grade(w, r, simp, d, body, nil, -1, serr)
	}
	sc, err := s.scenario(r)
	if err != nil {
		return simp.ErrorResponse(http.StatusBadRequest, "invalid_request_error", "simulator: "+err.Error())
	}
	if sc == nil {
		return simp.ErrorResponse(http.StatusInternalServerError, "api_error", "simulator: no scenario loaded")
	}
	in.Protocol = d.Name
	turn, serr := s.continueChain(in, simp)
	if serr != nil {
		turn = -1
	}
	if serr = s.grade(w, r, simp, d, body, in, turn, serr); serr != nil {
		return serr
	}
	if turn >= max(len(sc.Script), 1)+sc.TurnLimit {
		return simp.ErrorResponse(http.StatusBadRequest, "invalid_request_error",
			fmt.Sprintf("simulator: scenario %s allows %d turns; this request's history already holds %d", sc.FullName(), sc.TurnLimit, turn))
	}
	if serr := s.requestFault(simp, d); serr != nil {
		return serr
	}
	if s.opts.Faults.take("slow-first-byte", true) {
		select {
		case <-time.After(s.opts.SlowFirstByte):
		case <-r.Context().Done():
			return nil
		}
	}
	mt, err := answer(sc, in, body)
	if err != nil {
		return simp.ErrorResponse(http.StatusInternalServerError, "api_error", "simulator: "+err.Error())
	}
	mt = s.turnFaults(mt, d)
	model := in.Model
	if model == "" {
		model = sc.Model
	}
	o := adapters.ResponseOptions{Model: model, Seed: s.seed.Add(1), IncludeUsage: in.IncludeUsage,
		Created: s.now().Unix(), Request: body, Echo: in.Echo}
	if continuable(d) {
		if id := simp.ResponseID(o); id != "" {
			s.remember(id, simp, &mt, o, turn, in)
		}
	}
	// The response is written into a pooled buffer, reused once it is
	// written (o.Buf).
	bp := writeBuffers.Get().(*[]byte)
	defer writeBuffers.Put(bp)
	o.Buf = *bp
	for _, why := range mt.Why {
		w.Header().Add(adapters.WhyHeader, headerSafe(why))
	}
	if !in.Stream {
		writeBody(w, simp.ResponseHeaders(false), simp.Body(mt, o))
		return nil
	}
	s.stream(w, r, simp, d, mt, o)
	return nil
}

// requestFault takes a fault that answers the request with an HTTP error.
func (s *Server) requestFault(simp adapters.Simulated, d adapters.Descriptor) *adapters.SimError {
	if e := s.rateLimitFault(simp); e != nil {
		return e
	}
	f := s.opts.Faults
	switch {
	case f.take("server-error", true):
		return simp.ErrorResponse(http.StatusInternalServerError, "server_error", "The server had an error while processing your request. Sorry about that!")
	case f.take("overloaded", d.Raises("overloaded")):
		return simp.ErrorResponse(529, "overloaded_error", "Overloaded")
	}
	return nil
}

// turnFaults takes the faults that change the model's turn.
func (s *Server) turnFaults(mt adapters.ModelTurn, d adapters.Descriptor) adapters.ModelTurn {
	s.uniqueCallIDs(&mt)
	f := s.opts.Faults
	if f.take("refusal", true) {
		mt = refusalTurn(mt)
	}
	if f.take("truncate", true) {
		mt = truncateTurn(mt)
	}
	if f.take("content-filter", true) {
		mt = contentFilterTurn(mt)
	}
	if f.take("pause-turn", d.Raises("pause-turn")) {
		mt = pauseTurn(mt)
	}
	return mt
}

// simulated is the protocol's simulator side, once the request's key
// passes RequireKey; otherwise it has answered the request.
func (s *Server) simulated(w http.ResponseWriter, r *http.Request, protocol string) (adapters.Simulated, bool) {
	p, _ := registry.Lookup(protocol)
	simp, ok := p.(adapters.Simulated)
	if !ok {
		http.Error(w, "the simulator cannot speak "+protocol, http.StatusNotImplemented)
		return nil, false
	}
	if s.opts.RequireKey {
		if e := checkKey(simp, protocol, r, s.opts.Keys[protocol]); e != nil {
			writeError(w, e)
			return nil, false
		}
	}
	return simp, true
}

// scenario is the one the request names in ScenarioHeader, else the
// server's (nil when it has none).
func (s *Server) scenario(r *http.Request) (*session.Scenario, error) {
	if h := r.Header.Get(ScenarioHeader); h != "" && s.opts.Lookup != nil {
		return s.opts.Lookup(h)
	}
	return s.opts.Scenario, nil
}

// serveModels answers GET on a models path with the scenario's model.
func (s *Server) serveModels(w http.ResponseWriter, r *http.Request, d adapters.Descriptor, id string) {
	simp, ok := s.simulated(w, r, d.Name)
	if !ok {
		return
	}
	sc, err := s.scenario(r)
	if err != nil {
		writeError(w, simp.ErrorResponse(http.StatusBadRequest, "invalid_request_error", "simulator: "+err.Error()))
		return
	}
	model := "sim-model"
	if sc != nil && sc.Model != "" {
		model = sc.Model
	}
	body, e := modelsBody(simp, d.Models, id, model)
	if e != nil {
		writeError(w, e)
		return
	}
	writeBody(w, simp.ResponseHeaders(false), body)
}

// jsonType is a JSON body's Content-Type, as the header map holds it.
var jsonType = []string{"application/json"}

// writeBody answers 200 with a JSON body and its length up front (without
// it, net/http chunks any body over 2 KB).
// headerSafe keeps a header value to printable ASCII: a rule's words
// quote the prompt, which may be Chinese, and not every client accepts
// other bytes in a header (a character outside ASCII is written \uXXXX).
func headerSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			b.WriteByte(' ')
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(&b, "\\u%04x\\u%04x", hi, lo)
		default:
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return b.String()
}

func writeBody(w http.ResponseWriter, header http.Header, body []byte) {
	h := w.Header()
	for k, v := range header {
		h[k] = v
	}
	h["Content-Type"] = jsonType
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

func writeError(w http.ResponseWriter, e *adapters.SimError) {
	for k, v := range e.Header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	_, _ = w.Write(e.Body)
}

func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// Start serves on addr ("127.0.0.1:0" for a free port) until ctx ends. It
// returns the base URL (http://127.0.0.1:PORT).
func (s *Server) Start(ctx context.Context, addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	// The body deadline is set in ServeHTTP (tests call it directly).
	srv, ln := BoundedServer(ln, s, 0, s.opts.MaxConns)
	go func() { _ = srv.Serve(ln) }()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	return "http://" + ln.Addr().String(), nil
}

// bodyDeadline puts r's body under a read deadline d from now (none when
// d <= 0). The deadline covers reading the body only: it is lifted once
// the body is read to its end, so a long stream back is not cut
// (http.Server.ReadTimeout would also cancel the request's context
// mid-stream).
func bodyDeadline(w http.ResponseWriter, r *http.Request, d time.Duration) {
	if d <= 0 {
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(d))
	r.Body = &liftDeadline{ReadCloser: r.Body, rc: rc}
}

// BoundedServer is an http.Server and listener for h bounded as a
// server open to a room must be (the simulator's own, and serve
// --session's VCR): headers within 10s, each body within bodyTimeout,
// idle connections closed after 2m, at most maxConns open at once
// (either <= 0: none).
func BoundedServer(ln net.Listener, h http.Handler, bodyTimeout time.Duration, maxConns int) (*http.Server, net.Listener) {
	if maxConns > 0 {
		ln = netutil.LimitListener(ln, maxConns)
	}
	if bodyTimeout > 0 {
		inner := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			bodyDeadline(w, r, bodyTimeout)
			inner.ServeHTTP(w, r)
		})
	}
	return &http.Server{Handler: h, ReadHeaderTimeout: headerTimeout, IdleTimeout: idleTimeout}, ln
}

// liftDeadline is a request body read under a deadline; lift ends the
// deadline once the body is read (at its end, or when the reader says).
type liftDeadline struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (l *liftDeadline) Read(p []byte) (int, error) {
	n, err := l.ReadCloser.Read(p)
	if err == io.EOF {
		l.lift()
	}
	return n, err
}

func (l *liftDeadline) lift() {
	if !l.done {
		l.done = true
		_ = l.rc.SetReadDeadline(time.Time{})
	}
}

// served says what the simulator answers, for its 404: every protocol's
// POST paths and models paths, from the registry.
var served = func() string {
	var posts, gets []string
	seen := map[string]bool{}
	for _, d := range registry.All() {
		for _, p := range d.Endpoint.Paths {
			if !seen[p] {
				seen[p] = true
				posts = append(posts, p)
			}
		}
		if m := d.Models.Path; m != "" && !seen[m] {
			seen[m] = true
			gets = append(gets, m)
		}
	}
	return "The simulator serves POST " + strings.Join(posts, ", ") + ", and GET " + strings.Join(gets, ", ") + "."
}()
