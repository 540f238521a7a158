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
	"maps"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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
	// Delay paces stream events so a person can watch the lanes fill.
	Delay time.Duration
	// SlowFirstByte is how long the slow-first-byte fault waits.
	SlowFirstByte time.Duration
	// StallFor bounds the stall fault (it also ends when the client goes).
	StallFor time.Duration
}

// Server is the simulator.
type Server struct {
	opts Options
	seed atomic.Uint64

	mu        sync.Mutex
	responses map[string]storedResponse // Responses API ids it issued
	issued    map[string]bool           // call ids it issued
}

type storedResponse struct {
	depth   int                   // model turns up to and including this response
	stored  bool                  // store was not false: it can be continued
	results []adapters.ToolResult // every tool result the chain carried
	calls   map[string]string     // call_id → tool name, of every call the chain issued
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
	return &Server{opts: opts, responses: map[string]storedResponse{}, issued: map[string]bool{}}
}

// route maps a request path to the protocol the real provider speaks there.
func route(method, path string) (string, bool) {
	if method != http.MethodPost {
		return "", false
	}
	switch path {
	case "/v1/responses":
		return adapters.OpenAIResponses, true
	case "/v1/chat/completions":
		return adapters.OpenAIChat, true
	case "/chat/completions", "/v1/deepseek/chat/completions":
		return adapters.DeepSeekChat, true
	case "/v1/messages":
		return adapters.AnthropicMessages, true
	case "/v1beta/interactions":
		return adapters.GeminiInteractions, true
	}
	if strings.HasPrefix(path, "/v1beta/models/") && (strings.HasSuffix(path, ":generateContent") || strings.HasSuffix(path, ":streamGenerateContent")) {
		return adapters.Gemini, true
	}
	return "", false
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, ok := route(r.Method, r.URL.Path)
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error":{"message":"Unknown request URL: %s %s. The simulator serves POST /v1/responses, /v1/chat/completions, /chat/completions, /v1/messages, /v1beta/models/{model}:generateContent|streamGenerateContent and /v1beta/interactions.","type":"invalid_request_error","param":null,"code":"unknown_url"}}`, r.Method, jsonEscape(r.URL.Path))
		return
	}
	p, _ := registry.Lookup(name)
	simp, ok := p.(adapters.Simulated)
	if !ok {
		http.Error(w, "the simulator cannot speak "+name, http.StatusNotImplemented)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 32<<20+1))
	if err != nil {
		return
	}
	if len(body) > 32<<20 {
		writeError(w, simp.ErrorResponse(http.StatusRequestEntityTooLarge, "request_too_large", "Request exceeds the maximum allowed number of bytes."))
		return
	}
	in, serr := simp.CheckRequest(r.Method, r.URL.RequestURI(), r.Header, body)
	if serr != nil {
		writeError(w, serr)
		return
	}
	sc := s.opts.Scenario
	if h := r.Header.Get(ScenarioHeader); h != "" && s.opts.Lookup != nil {
		if sc, err = s.opts.Lookup(h); err != nil {
			writeError(w, simp.ErrorResponse(http.StatusBadRequest, "invalid_request_error", "simulator: "+err.Error()))
			return
		}
	}
	if sc == nil {
		writeError(w, simp.ErrorResponse(http.StatusInternalServerError, "api_error", "simulator: no scenario loaded"))
		return
	}

	in.Protocol = name
	turn := in.ModelTurns
	chain, checksChain := simp.(chainChecker)
	if in.PreviousResponseID != "" {
		s.mu.Lock()
		prev, ok := s.responses[in.PreviousResponseID]
		s.mu.Unlock()
		if !ok || !prev.stored {
			if checksChain {
				writeError(w, chain.UnknownPrevious(in.PreviousResponseID))
				return
			}
			writeError(w, simp.ErrorResponse(http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("Previous response with id '%s' not found.", in.PreviousResponseID)))
			return
		}
		if checksChain {
			for _, r := range in.Results {
				if _, ok := prev.calls[r.CallID]; !ok {
					writeError(w, chain.UnmatchedResult(r.CallID))
					return
				}
			}
		}
		turn += prev.depth
		// The chain carries the earlier calls and results: the model sees
		// them as if they had been resent.
		for i, r := range in.Results {
			if r.Name == "" {
				in.Results[i].Name = prev.calls[r.CallID]
			}
		}
		in.Results = append(append([]adapters.ToolResult(nil), prev.results...), in.Results...)
	}
	if turn >= max(len(sc.Script), 1)+sc.TurnLimit {
		writeError(w, simp.ErrorResponse(http.StatusBadRequest, "invalid_request_error",
			fmt.Sprintf("simulator: scenario %s allows %d turns; this request's history already holds %d", sc.FullName(), sc.TurnLimit, turn)))
		return
	}

	f := s.opts.Faults
	switch {
	case f.take("rate-limit", true):
		e := simp.ErrorResponse(http.StatusTooManyRequests, "rate_limit", "Rate limit reached for requests. Please try again in 1s.")
		e.Header.Set("Retry-After", "1")
		writeError(w, e)
		return
	case f.take("server-error", true):
		writeError(w, simp.ErrorResponse(http.StatusInternalServerError, "server_error", "The server had an error while processing your request. Sorry about that!"))
		return
	case f.take("overloaded", name == adapters.AnthropicMessages):
		writeError(w, simp.ErrorResponse(529, "overloaded_error", "Overloaded"))
		return
	}
	if f.take("slow-first-byte", true) {
		select {
		case <-time.After(s.opts.SlowFirstByte):
		case <-r.Context().Done():
			return
		}
	}

	mt, err := answer(sc, in, body)
	if err != nil {
		writeError(w, simp.ErrorResponse(http.StatusInternalServerError, "api_error", "simulator: "+err.Error()))
		return
	}
	s.uniqueCallIDs(&mt)
	if f.take("refusal", true) {
		mt = refusalTurn(mt)
	}
	if f.take("truncate", true) {
		mt = truncateTurn(mt)
	}
	model := in.Model
	if model == "" {
		model = sc.Model
	}
	o := adapters.ResponseOptions{Model: model, Seed: s.seed.Add(1), IncludeUsage: in.IncludeUsage}
	if id := simp.ResponseID(o); id != "" {
		s.remember(id, simp, &mt, o, turn, in)
	}
	if !in.Stream {
		for k, v := range simp.ResponseHeaders(false) {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(simp.Body(mt, o))
		return
	}
	s.stream(w, r, simp, name, mt, o)
}

// uniqueCallIDs keeps every call id this server issues unique, as a real
// provider's are: the first conversation gets the ids the model chose (the
// refund case's are the chapter's, call_order…), a later one that would
// repeat them gets a numbered suffix. The proxy tells conversations apart
// by the call ids their requests quote.
func (s *Server) uniqueCallIDs(mt *adapters.ModelTurn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, it := range mt.Items {
		if it.Kind != adapters.KindToolCall || it.CallID == "" {
			continue
		}
		id, suffix := it.CallID, ""
		for n := 2; s.issued[id]; n++ {
			suffix = "_" + strconv.Itoa(n)
			id = it.CallID + suffix
		}
		s.issued[id] = true
		mt.Items[i].CallID = id
		if it.ID != "" {
			mt.Items[i].ID = it.ID + suffix
		}
	}
}

// remember keeps a response the client may continue with
// previous_response_id: its depth, the results its chain carried and the
// calls it issued, by call_id.
func (s *Server) remember(id string, simp adapters.Simulated, mt *adapters.ModelTurn, o adapters.ResponseOptions, turn int, in *adapters.Inbound) {
	if a, ok := simp.(interface {
		AssignCallIDs(adapters.ModelTurn, adapters.ResponseOptions) adapters.ModelTurn
	}); ok {
		*mt = a.AssignCallIDs(*mt, o)
	}
	calls := map[string]string{}
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, ok := s.responses[in.PreviousResponseID]; ok {
		maps.Copy(calls, prev.calls)
	}
	for _, it := range mt.Items {
		if it.Kind == adapters.KindToolCall {
			calls[it.CallID] = it.Name
		}
	}
	s.responses[id] = storedResponse{depth: turn + 1, stored: in.Store == nil || *in.Store, results: in.Results, calls: calls}
}

// stream writes the turn as SSE, applying the stream faults.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, simp adapters.Simulated, protocol string, mt adapters.ModelTurn, o adapters.ResponseOptions) {
	events := simp.StreamEvents(mt, o)
	f := s.opts.Faults
	cut, stall := -1, -1
	hasPhase := func(ph adapters.Phase) bool { return indexOfPhase(events, ph, 0.5) >= 0 }
	switch {
	case f.take("disconnect-mid-args", hasPhase(adapters.PhaseArgs)):
		cut = indexOfPhase(events, adapters.PhaseArgs, 0.5)
	case f.take("disconnect-mid-text", hasPhase(adapters.PhaseText)):
		cut = indexOfPhase(events, adapters.PhaseText, 0.5)
	case f.take("stall", true):
		stall = len(events) / 2
	}
	if f.take("error-after-200", true) {
		at := max(1, len(events)/2)
		events = append(events[:at:at], simp.ErrorEvent("overloaded_error", "Overloaded")...)
	}
	if f.take("no-terminal", true) {
		events = dropPhase(events, adapters.PhaseTerminal)
	}
	if f.take("malformed-event", true) {
		at := max(1, len(events)/3)
		bad := events[at]
		bad.Data = bad.Data[:len(bad.Data)/2]
		events = insert(events, at, bad)
	}
	if f.take("unknown-event", true) {
		events = insert(events, max(1, len(events)/4), simp.UnknownEvent())
	}
	if f.take("duplicate-events", true) {
		// Responses events repeat with their sequence_number; Gemini's SDK
		// rejects any field but data, so its repeats carry nothing to tell
		// them apart (as a real duplicate would); the others get SSE ids.
		events = duplicate(events, protocol != adapters.OpenAIResponses && protocol != adapters.Gemini)
	}
	if f.take("late-event", true) {
		for i := len(events) - 1; i >= 0; i-- {
			if events[i].Phase == adapters.PhaseText || events[i].Phase == adapters.PhaseArgs {
				events = append(events, events[i])
				break
			}
		}
	}

	// Protocols that number their events (Responses' sequence_number)
	// renumber after the faults moved events around, so an inserted event
	// carries its own number and a repeat keeps the one it repeats.
	if rn, ok := simp.(interface {
		Renumber([]adapters.WireEvent) []adapters.WireEvent
	}); ok {
		events = rn.Renumber(events)
	}
	for k, v := range simp.ResponseHeaders(true) {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	nl := simp.LineEnd()
	ctx := r.Context()
	for i, ev := range events {
		if i == cut {
			if flusher != nil {
				flusher.Flush()
			}
			// Abort: the connection closes without the end of the body,
			// as a dropped connection does.
			panic(http.ErrAbortHandler)
		}
		if i == stall {
			flusher.Flush()
			select {
			case <-time.After(s.opts.StallFor):
			case <-ctx.Done():
			}
			return
		}
		if s.opts.Delay > 0 && i > 0 {
			select {
			case <-time.After(s.opts.Delay):
			case <-ctx.Done():
				return
			}
		}
		var b strings.Builder
		if ev.Event != "" {
			b.WriteString("event: " + ev.Event + nl)
		}
		if ev.ID != "" {
			b.WriteString("id: " + ev.ID + nl)
		}
		b.WriteString("data: " + ev.Data + nl + nl)
		if _, err := io.WriteString(w, b.String()); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
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
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	return "http://" + ln.Addr().String(), nil
}
