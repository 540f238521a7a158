package sim

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
)

// Writing a turn as a stream: the stream faults, then the events, paced for
// people when asked.

// stream writes the turn as SSE, applying the stream faults; a protocol
// whose stream is asked for by path and comes as one JSON array unless the
// query says otherwise (Gemini's streamGenerateContent without alt=sse)
// gets the same chunks as that array, written as they come, as the API
// sends it.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, simp adapters.Simulated, d adapters.Descriptor, mt adapters.ModelTurn, o adapters.ResponseOptions) {
	array := arrayStream(d.Endpoint, r.URL.RawQuery)
	events := simp.StreamEvents(mt, o)
	cut, stall := s.breakPoint(events)
	events = s.reshape(events, simp, d.Endpoint.SSEIDs)
	h := w.Header()
	for k, v := range simp.ResponseHeaders(true) {
		h[k] = v
	}
	h["Content-Type"] = sseType
	if array {
		h["Content-Type"] = arrayType
	}
	h["Cache-Control"] = noCache
	w.WriteHeader(http.StatusOK)
	s.writeEvents(w, r.Context(), events, eventFraming{array: array, nl: simp.LineEnd(), cut: cut, stall: stall, pause: contentPause(mt, events, s.opts.Pace)})
}

// A stream's headers, as the header map holds them.
var (
	sseType   = []string{"text/event-stream; charset=utf-8"}
	arrayType = []string{"application/json; charset=UTF-8"}
	noCache   = []string{"no-cache"}
)

// breakPoint takes a fault that ends the stream early: the event index
// where the connection is cut, or where it stalls (-1: none).
func (s *Server) breakPoint(events []adapters.WireEvent) (cut, stall int) {
	f := s.opts.Faults
	cut, stall = -1, -1
	if f == nil {
		return cut, stall
	}
	hasPhase := func(ph adapters.Phase) bool { return indexOfPhase(events, ph, 0.5) >= 0 }
	switch {
	case f.take("disconnect-mid-args", hasPhase(adapters.PhaseArgs)):
		cut = indexOfPhase(events, adapters.PhaseArgs, 0.5)
	case f.take("disconnect-mid-text", hasPhase(adapters.PhaseText)):
		cut = indexOfPhase(events, adapters.PhaseText, 0.5)
	case f.take("stall", true):
		stall = len(events) / 2
	}
	return cut, stall
}

// arrayStream: the endpoint streams as one JSON array (its StreamAction
// asked for the stream) unless the query has its ArrayUnless parameter.
func arrayStream(e adapters.Endpoint, rawQuery string) bool {
	if e.StreamAction == "" || e.ArrayUnless == "" {
		return false
	}
	key, value, _ := strings.Cut(e.ArrayUnless, "=")
	q, _ := url.ParseQuery(rawQuery)
	return q.Get(key) != value
}

// reshape applies the faults that move, add or drop events; sseIDs gives
// duplicated events SSE ids (the descriptor's Endpoint.SSEIDs).
func (s *Server) reshape(events []adapters.WireEvent, simp adapters.Simulated, sseIDs bool) []adapters.WireEvent {
	f := s.opts.Faults
	reshaped := false
	take := func(name string) bool {
		ok := f.take(name, true)
		reshaped = reshaped || ok
		return ok
	}
	if take("error-after-200") {
		at := max(1, len(events)/2)
		events = append(events[:at:at], simp.ErrorEvent("overloaded_error", "Overloaded")...)
	}
	if take("no-terminal") {
		events = dropPhase(events, adapters.PhaseTerminal)
	}
	if take("malformed-event") {
		at := max(1, len(events)/3)
		bad := events[at]
		bad.Data = bad.Data[:len(bad.Data)/2]
		events = insert(events, at, bad)
	}
	if take("unknown-event") {
		events = insert(events, max(1, len(events)/4), simp.UnknownEvent())
	}
	if take("duplicate-events") {
		// Responses events repeat with their sequence_number; Gemini's SDK
		// rejects any field but data, so its repeats carry nothing to tell
		// them apart (as a real duplicate would); the protocols whose
		// descriptor says SSEIDs get SSE ids.
		events = duplicate(events, sseIDs)
	}
	if take("late-event") {
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
	}); ok && reshaped {
		events = rn.Renumber(events)
	}
	return events
}

// writeBuffers hold a stream's bytes before they are written: a stream is
// tens of kilobytes (Responses repeats the whole Response object in its
// first and last events), and allocating and clearing that per request
// was a good part of its cost.
var writeBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// eventFraming is how a stream's events go out.
type eventFraming struct {
	array      bool   // Gemini's JSON-array stream instead of SSE
	nl         string // the SSE line ending
	cut, stall int    // the event where the connection is cut, or stalls (-1: none)
	pause      time.Duration
}

// writeEvents writes the events. They go out as the connection takes
// them: the bytes so far are written and flushed before each pause, so a
// paced stream arrives event by event; an unpaced one is written in one
// piece (a write per event was most of its cost).
func (s *Server) writeEvents(w http.ResponseWriter, ctx context.Context, events []adapters.WireEvent, fr eventFraming) {
	flusher, _ := w.(http.Flusher)
	bp := writeBuffers.Get().(*[]byte)
	buf := (*bp)[:0]
	defer func() {
		if cap(buf) <= 1<<20 { // a rare huge stream does not stay pinned
			*bp = buf
			writeBuffers.Put(bp)
		}
	}()
	flush := func() bool {
		_, err := w.Write(buf)
		buf = buf[:0]
		if flusher != nil {
			flusher.Flush()
		}
		return err == nil
	}
	for i, ev := range events {
		if i == fr.cut {
			flush()
			// Abort: the connection closes without the end of the body,
			// as a dropped connection does.
			panic(http.ErrAbortHandler)
		}
		if i == fr.stall {
			flush()
			select {
			case <-time.After(s.opts.StallFor):
			case <-ctx.Done():
			}
			return
		}
		wait := fr.pause
		if !isContent(ev.Phase) {
			wait = 0
		}
		if i > 0 {
			wait += s.opts.Delay
		}
		if wait > 0 {
			if !flush() {
				return
			}
			if fr.pause > 0 {
				// A paced stream keeps its pace for the person watching:
				// while they rest on a step, its clock stops.
				s.opts.Hold.wait(ctx)
			}
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return
			}
		}
		if fr.array {
			buf = append(buf, arrayPiece(i, ev.Data)...)
		} else {
			buf = wire.AppendEvent(buf, ev, fr.nl)
		}
	}
	if fr.array {
		buf = append(buf, "\n]"...)
	}
	_, _ = w.Write(buf)
}

// arrayPiece is chunk i of a JSON-array stream: "[" or the separator, then
// the chunk pretty-printed as Google prints them (a malformed chunk, from
// the malformed-event fault, as it is).
func arrayPiece(i int, data string) string {
	lead := "\n,\r\n"
	if i == 0 {
		lead = "["
	}
	b, ok := wire.AppendIndent([]byte(lead), data)
	if !ok {
		return lead + data
	}
	return string(b)
}
