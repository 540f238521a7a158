package proxy

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/background"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/timeline"
	"github.com/modelwire/modelwire/validate"
)

// exchange is one HTTP request and its response, as recorded: a turn
// (or a retry attempt) of a conversation.
type exchange struct {
	p    *Proxy
	conv *conversation
	req  request
	turn int
	// attempt numbers the tries of the turn (a retry is attempt 2…).
	attempt     int
	retryReason string

	method   string
	target   string // the upstream URL ("" when there is none)
	upstream string // its base
	path     string // the request's path and query, redacted
	// What is recorded of the request: redacted headers, scrubbed body.
	recHeader http.Header
	recBody   []byte
	// share is the body's part of the request budget: the recorder gives
	// its half back once the attempt, with its body, is recorded.
	share *bodyShare
	scrub *scrubber
	sent  time.Time

	// prevHead is closed once the previous exchange of the conversation
	// recorded its head; headDone once this one has.
	prevHead, headDone chan struct{}
	headOnce           sync.Once

	// Hold mode: the recorder hands the summary to the handler and then
	// records the decisions the handler sends, until tail is closed.
	summary  chan adapters.Summary
	tail     chan session.Update
	replaced string // what the client got instead (hold rejection)
	// recSum is the summary recorded when it differs from the one judged:
	// a whole body decoded again after the body rules' pointers changed it.
	recSum *adapters.Summary

	// Rules (rules_act.go, rules_response.go).
	urlPath     string
	respRules   []Rule // response rules that may match once it is decoded
	rulesSource string
	respDelay   time.Duration
	respFault   string // an HTTP fault answers instead of the response
	cut         int    // cut the response to the client after this many events
	ruled       string // a rule answered instead of the upstream
	// held: the response is held (hold mode or a response rule); items
	// are its decoded output items, in order, for re-encoding an edit.
	held  bool
	items []adapters.OutputItem
	// pre are updates recorded right after the exchange's head (a request
	// edit, an edited call carried back).
	pre []session.Update
}

// begin reads a request and links it to its conversation. It does no
// I/O and never waits, except when the link hangs on a response the
// client has read but its recording has not yet noted (a Responses
// previous_response_id, or a tie between conversations that started
// alike): then it waits for the recordings in flight, at most a second
// each. A gzip-encoded request is forwarded as it came; its body is
// recorded decoded.
func (p *Proxy) begin(r *http.Request, body []byte, whole bool) *exchange {
	protocol := classify(r.Method, r.URL.Path, p.opts.Upstream)
	if !whole {
		protocol = "" // too large to read: forwarded, listed as unknown
	}
	if whole && strings.EqualFold(strings.TrimSpace(r.Header.Get("Content-Encoding")), "gzip") {
		// A compressed request is forwarded as it is; a copy is read.
		if zr, err := gzip.NewReader(bytes.NewReader(body)); err == nil {
			if plain, err := io.ReadAll(io.LimitReader(zr, maxBody)); err == nil {
				body = plain
			}
		}
	}
	var req request
	if protocol != "" {
		req = readRequest(protocol, r.URL.Path, body)
	}
	x := &exchange{p: p, req: req, method: r.Method, urlPath: r.URL.Path, headDone: make(chan struct{}), summary: make(chan adapters.Summary, 1),
		tail: make(chan session.Update, 4)}
	x.upstream = p.upstreamFor(protocol, r.URL.Path, r.Header)
	if x.upstream != "" {
		x.target = target(x.upstream, r.URL)
	}
	x.scrub = newScrubber(r.Header, r.URL, x.target)
	x.scrub.body = p.opts.BodyRules
	x.path = x.scrub.all(r.URL.RequestURI())
	x.recHeader = x.scrub.known.Header(r.Header)
	if whole {
		x.recBody = x.scrub.request(body)
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	if req.previousID != "" {
		deadline := time.Now().Add(time.Second)
		for p.byResponse[req.previousID] == nil && p.inflight > 0 && time.Now().Before(deadline) {
			p.waitRecording(deadline)
		}
	}
	for deadline := time.Now().Add(time.Second); ; {
		x.conv, x.turn, x.attempt, x.retryReason = p.link(req, time.Now(), time.Now().Before(deadline))
		if x.conv != nil {
			break
		}
		p.waitRecording(deadline)
	}
	x.prevHead, x.conv.lastHead = x.conv.lastHead, x.headDone
	if protocol != "" {
		p.inflight++
		x.conv.pending++
	}
	x.conv.active++
	return x
}

// waitRecording waits, with p.mu held, until a recording notes its
// response or the deadline passes.
func (p *Proxy) waitRecording(deadline time.Time) {
	t := time.AfterFunc(time.Until(deadline), func() {
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	})
	p.cond.Wait()
	t.Stop()
}

// protocolName is the protocol as recorded ("unknown" when none).
func (x *exchange) protocolName() string {
	if x.req.protocol == "" {
		return "unknown"
	}
	return x.req.protocol
}

// holds reports whether hold mode buffers this response: a decoded
// protocol, a request that offers tools, a success status.
func (x *exchange) holds(status int) bool {
	if x.req.protocol == "" || status < 200 || status > 299 {
		return false
	}
	return len(x.respRules) > 0 || x.p.opts.Hold != nil && x.p.holdTools() && len(x.req.toolSchemas) > 0
}

// markFailed notes, before the client learns of it, that the exchange
// failed: an identical request that follows is its retry.
func (x *exchange) markFailed(why string) {
	if x.req.protocol == "" {
		return
	}
	x.p.mu.Lock()
	if x.conv.lastKey == x.req.key {
		x.conv.lastFailed = why
	}
	x.p.mu.Unlock()
}

// noResponse records an exchange that got no response.
func (x *exchange) noResponse(msg string) {
	x.markFailed(msg)
	go func() {
		defer x.p.wg.Done()
		defer x.closeHead()
		x.waitHead(nil)
		x.head(0, nil, time.Time{}, msg)
		x.closeHead()
		x.finish(outcome{transportErr: msg, req: x.req}, nil)
	}()
}

// waitHead waits until the exchange before it in the conversation has
// recorded its head, so that heads are recorded in order; t is the
// recording's task (nil on a goroutine of its own).
func (x *exchange) waitHead(t *background.Task) {
	if x.prevHead != nil {
		t.Until(x.prevHead)
	}
}

func (x *exchange) closeHead() { x.headOnce.Do(func() { close(x.headDone) }) }

// emit records an update, then shows it. Recording errors are logged:
// they never touch the exchange.
func (x *exchange) emit(u session.Update) {
	if u.At.IsZero() {
		u.At = time.Now()
	}
	u.SessionID = x.conv.id
	x.scrub.update(&u)
	if j := x.conv.j; j != nil {
		if err := x.journal(j, u); err != nil {
			x.p.recordErr(err)
		}
	}
	if obs := x.p.opts.Observe; obs != nil {
		obs(u)
	}
}

// head records the start of the exchange: the session (for a new
// conversation), the request (for a new turn) and the attempt.
func (x *exchange) head(status int, h http.Header, firstByte time.Time, errText string) {
	p := x.p
	c := x.conv
	if c.id == "" {
		if p.opts.DB != nil {
			c.j = timeline.NewStoreJournal(p.opts.DB, x.meta(), x.req.stream)
			id, err := c.j.Start()
			if err != nil {
				p.recordErr(err)
				c.j = nil
			}
			c.id = id
		}
		if c.id == "" {
			c.id = fmt.Sprintf("proxy-%d", c.n)
		}
		x.emit(session.Update{Kind: session.UpStarted})
	}
	if x.attempt == 1 {
		req := &adapters.HTTPRequest{Method: x.method, Path: x.path, Headers: redactedHeaders(x.recHeader), Body: jsonOrNil(x.recBody)}
		x.emit(session.Update{Kind: session.UpAssembled, Turn: x.turn, Request: req})
	}
	u := session.Update{Kind: session.UpAttempt, Turn: x.turn, Attempt: x.attempt, URL: x.target, HTTPStatus: status,
		Header: h, Err: errText} // emit scrubs them
	if status != 0 {
		u.Timings = &session.Timings{Headers: sinceMS(x.sent, firstByte), Server: session.ServerTimeOf(x.req.protocol, h)}
	}
	x.emit(u)
	for _, pu := range x.pre {
		x.emit(pu)
	}
	x.pre = nil
	x.recBody = nil // recorded: the budget's share goes back
	x.share.done()
	x.share = nil
}

// meta describes a new conversation's session.
func (x *exchange) meta() store.SessionMeta {
	p := x.p
	provider := p.opts.Provider
	if provider == "" {
		provider = providerOf(x.upstream)
	}
	history := adapters.HistoryFull
	if x.req.previousID != "" {
		history = adapters.HistoryPreviousResponse
	}
	host := hostPort(x.upstream)
	if provider == adapters.ProviderSim {
		host = "sim" // the simulator's port is an internal detail
	}
	title := x.method + " " + host + strings.SplitN(x.path, "?", 2)[0]
	if x.conv.unknown {
		title = "unclassified requests (forwarded, not decoded)"
	} else if t := oneLine(x.scrub.text(x.titleText()), 60); t != "" {
		title += " · " + t
	}
	params, _ := jsonMarshal(map[string]any{"stream": x.req.stream, "history": history, "upstream": x.scrub.all(x.upstream),
		"hold_tools": p.opts.Hold != nil})
	man := Manifest(x.protocolName(), x.method, x.path, x.recHeader, x.recBody)
	man.Parameters = params
	man.Tools, man.OutputSchema = validJSON(x.scrub.body.JSONStrings(x.req.tools)), validJSON(x.scrub.body.JSONStrings(x.req.schema))
	return store.SessionMeta{Title: x.scrub.body.Text(title), Protocol: x.protocolName(), Provider: provider, Model: x.req.model,
		BaseURL: x.scrub.all(x.upstream), Source: "proxy", Version: p.opts.Version, Manifest: man}
}

// maxRecorded bounds an error or undecoded body kept for the record.
const maxRecorded = 1 << 20

// record records an exchange that got a response, in the background:
// it reads the spool at its own pace, decodes, and emits the updates.
func (x *exchange) record(status int, h http.Header, firstByte time.Time, sp *spool, hold bool) {
	p := x.p
	defer p.wg.Done()
	defer x.closeHead()
	x.waitHead(sp.task)
	x.head(status, h, firstByte, "")
	x.closeHead()

	o := outcome{status: status, req: x.req}
	var body io.Reader = sp
	decodeErr := ""
	switch enc := strings.ToLower(strings.TrimSpace(h.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip", "x-gzip":
		in := &countingReader{r: sp}
		body = x.inflated(in, &lazyReader{open: func() (io.Reader, error) { return gzip.NewReader(in) }})
	case "deflate": // HTTP's deflate is the zlib format
		in := &countingReader{r: sp}
		body = x.inflated(in, &lazyReader{open: func() (io.Reader, error) { return zlib.NewReader(in) }})
	default:
		decodeErr = "the body is " + enc + "-encoded, which the recorder does not decode: forwarded, not decoded"
	}
	var timings session.Timings
	timings.Headers = sinceMS(x.sent, firstByte)
	timings.Server = session.ServerTimeOf(x.req.protocol, h)
	success := status >= 200 && status <= 299
	var sum *adapters.Summary
	switch {
	case x.req.protocol == "" || decodeErr != "":
		data, n := readCapped(body, maxRecorded)
		step := adapters.Step{Index: 0, Raw: adapters.RawEvent{Data: data}}
		if decodeErr != "" {
			step.Events = []adapters.Event{adapters.Diag(adapters.DiagReadError, decodeErr)}
		} else if n > maxRecorded {
			step.Events = []adapters.Event{adapters.Diag(adapters.DiagReadError, fmt.Sprintf("%d bytes forwarded; the first %d recorded", n, maxRecorded))}
		}
		timings.Terminal = sinceMS(x.sent, time.Now())
		x.emit(session.Update{Kind: session.UpStep, Turn: x.turn, Attempt: x.attempt, Step: &step, OffsetMS: timings.Terminal, Timings: &timings})
	case !success:
		data, _ := readCapped(body, maxRecorded)
		prot, _ := registry.Lookup(x.req.protocol)
		apiErr := prot.DecodeError(status, h, []byte(data))
		st := adapters.NewStream(prot)
		evs := st.Reducer().Apply([]adapters.Event{{Type: adapters.EvTerminal, Status: adapters.StatusFailed, StopReason: adapters.StopError, Error: apiErr}})
		step := adapters.Step{Index: 0, Raw: adapters.RawEvent{Data: data}, Events: evs}
		timings.Terminal = sinceMS(x.sent, time.Now())
		x.emit(session.Update{Kind: session.UpStep, Turn: x.turn, Attempt: x.attempt, Step: &step, OffsetMS: timings.Terminal, Timings: &timings})
		s := st.Summary()
		sum = &s
	default:
		s := x.decode(h, body, sp, &timings)
		sum = &s
	}
	_, _ = io.Copy(io.Discard, sp) // whatever the decoder left (it stops at an oversize event)
	if err := sp.result(); err != nil {
		o.transportErr = transportText(err, sp.forwarded())
	}
	o.cancelled, o.forwarded = sp.wasCancelled(), sp.forwarded()
	if o.cancelled {
		o.stopped = x.p.stopReason()
	}
	if sum != nil {
		session.SealSummary(sum, x.scrub.known)
	}
	o.sum = sum
	x.noteResponse(sum)
	recSum := sum
	if x.recSum != nil {
		recSum = x.recSum
	}
	x.emit(session.Update{Kind: session.UpResponse, Turn: x.turn, Attempt: x.attempt, Summary: recSum, Err: o.transportErr})
	if hold {
		if sum == nil {
			sum = &adapters.Summary{}
		}
		x.summary <- *sum
		for u := range x.tail {
			x.emit(u)
		}
		o.replaced = x.replaced
	}
	if o.replaced == "" {
		o.replaced = x.ruled
	}
	x.finish(o, sum)
}

// decode reads a successful response: a stream event by event, or a
// whole body.
func (x *exchange) decode(h http.Header, body io.Reader, sp *spool, timings *session.Timings) adapters.Summary {
	prot, _ := registry.Lookup(x.req.protocol)
	st := adapters.NewStream(prot)
	// A stream is what says so; a body served as neither SSE nor JSON is
	// told by its first bytes (some local servers label streams text/plain).
	br := bufio.NewReader(body)
	body = br
	ct := strings.ToLower(h.Get("Content-Type"))
	stream := strings.HasPrefix(ct, "text/event-stream")
	if !stream && !strings.Contains(ct, "json") {
		head, _ := br.Peek(64)
		stream = len(head) > 0 && adapters.LooksLikeStream(head)
	}
	if !stream {
		// A whole body is decoded at once, so it is read whole: at most
		// MaxDecoded bytes of it; a larger one (or a decompression bomb)
		// is recorded as too large to decode, and the rest is left for
		// the caller to drain (the client has it all).
		b, rerr := io.ReadAll(io.LimitReader(body, x.p.opts.MaxDecoded+1))
		var big *tooLargeError
		if int64(len(b)) > x.p.opts.MaxDecoded || errors.As(rerr, &big) {
			why := fmt.Sprintf("the body is larger than %d bytes decoded (--max-decoded): too large to decode; forwarded, not decoded", x.p.opts.MaxDecoded)
			if big != nil {
				why = big.Error()
			}
			b = nil
			step := adapters.Step{Index: 0, Events: []adapters.Event{adapters.Diag(adapters.DiagReadError, why)}}
			off := sinceMS(x.sent, time.Now())
			timings.Terminal = off
			x.emit(session.Update{Kind: session.UpStep, Turn: x.turn, Attempt: x.attempt, Step: &step, OffsetMS: off, Timings: timings})
			return st.Summary()
		}
		now := time.Now()
		if !sp.arrived().IsZero() {
			now = sp.arrived()
		}
		step := adapters.Step{Index: 0, Raw: adapters.RawEvent{Data: string(b)}, Events: st.FeedBody(b)}
		if rerr != nil && len(b) == 0 {
			step.Events = append([]adapters.Event{adapters.Diag(adapters.DiagReadError, rerr.Error())}, step.Events...)
		}
		off := sinceMS(x.sent, now)
		timings.FirstEvent, timings.Terminal = off, off
		timings.MarkTokens(step.Events, off)
		x.responseIDs(step.Events)
		x.redecode(prot, b, &step) // after the ids are noted: a pointer may name one
		x.emit(session.Update{Kind: session.UpStep, Turn: x.turn, Attempt: x.attempt, Step: &step, OffsetMS: off, Timings: timings})
		x.keepItems(st)
		return st.Summary()
	}
	// A stream is decoded and stored event by event, but what it reduces
	// to (its text and arguments, held by the reducers until the end) grows
	// with it: once its content passes MaxStreamText bytes the recorder stops,
	// the stream ends with a read_error saying so, and the rest is
	// forwarded, not recorded. (Its SSE bytes are not counted: a long
	// stream of small deltas reduces to little.)
	capped := &streamCap{r: body, max: x.p.opts.MaxStreamText}
	body = capped
	var held *heldStream
	if x.scrub.body.HasPatterns() {
		held = &heldStream{max: x.p.opts.MaxDecoded}
	}
	sh := newShadow(prot, x.scrub.body)
	_ = adapters.ReadStream(prot, st, body, func(step adapters.Step) error {
		capped.count(step.Events)
		at := sp.arrived()
		if step.Index < 0 || at.IsZero() {
			at = time.Now()
		}
		off := sinceMS(x.sent, at)
		if step.Index >= 0 && timings.FirstEvent == 0 {
			timings.FirstEvent = off
		}
		timings.MarkTokens(step.Events, off)
		if timings.Terminal == 0 && st.Reducer().Done() {
			timings.Terminal = off
		}
		x.responseIDs(step.Events)
		if sh != nil {
			sh.step(&step) // recorded as the pointers redact it
		}
		u := session.Update{Kind: session.UpStep, Turn: x.turn, Attempt: x.attempt, Step: &step, OffsetMS: off}
		if step.Index < 0 {
			t := *timings
			u.Timings = &t
		}
		switch {
		case held == nil:
			x.emit(u)
		case !held.add(u):
			capped.over = held.overText()
		}
		return nil
	})
	if held != nil {
		// Matches split across events are cut before anything is recorded.
		cutAcross(held.us, x.scrub.body)
		for _, u := range held.us {
			x.emit(u)
		}
	}
	if sh != nil {
		x.recSum = sh.summary()
	}
	x.keepItems(st)
	return st.Summary()
}

// responseIDs notes the response ids the conversation received, for
// previous_response_id.
func (x *exchange) responseIDs(evs []adapters.Event) {
	for _, ev := range evs {
		if ev.Type == adapters.EvResponseStarted && ev.ResponseID != "" {
			x.p.mu.Lock()
			x.p.byResponse[ev.ResponseID] = x.conv
			x.p.mu.Unlock()
		}
	}
}

// noteResponse keeps what the next request will quote of this response,
// and ends the exchange's part in the in-flight count.
func (x *exchange) noteResponse(sum *adapters.Summary) {
	p := x.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if x.req.protocol == "" {
		return
	}
	if sum != nil && x.conv.lastKey == x.req.key {
		var ids []string
		for _, c := range sum.ToolCalls {
			ids = append(ids, c.CallID)
		}
		x.conv.marks = marksOf(ids, sum.Text)
	}
	p.inflight--
	x.conv.pending--
	p.cond.Broadcast()
}

// finish judges the exchange and records the verdict.
func (x *exchange) finish(o outcome, sum *adapters.Summary) {
	layers := judge(o)
	failed := false
	for _, l := range layers {
		failed = failed || l.Status == validate.Fail
	}
	x.p.mu.Lock()
	if v, ok := x.conv.verdicts[x.turn]; !ok || x.attempt >= v.attempt {
		x.conv.verdicts[x.turn] = verdict{attempt: x.attempt, failed: failed} // a retry's verdict is its turn's
	}
	if o.sum == nil && x.req.protocol != "" && o.status == 0 {
		// no response at all: noteResponse never ran
		x.p.inflight--
		x.conv.pending--
		x.p.cond.Broadcast()
	}
	x.p.mu.Unlock()
	x.emit(session.Update{Kind: session.UpValidated, Turn: x.turn, Layers: layers})
	x.p.mu.Lock()
	x.conv.active--
	x.p.mu.Unlock()
}
