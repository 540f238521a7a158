package adapters

import (
	"bytes"
	"net/http"
	"strings"
)

// Framing is how a protocol's stream is cut into raw events.
type Framing int

// Framings.
const (
	FramingSSE    Framing = iota // text/event-stream
	FramingNDJSON                // one JSON object a line (Claude Code stream-json)
)

// RawEvent is one event as it came off the wire: an SSE event, one NDJSON
// line, or a whole non-streaming body.
type RawEvent struct {
	Event string `json:"event,omitempty"` // SSE event name, "" when none
	Data  string `json:"data"`
	ID    string `json:"id,omitempty"` // set only when this event carried an id field
}

// WriteSSE writes the event to b as one SSE event (id, event, a data line
// for each line of Data, a blank line), as a recording is played back.
func (r RawEvent) WriteSSE(b *bytes.Buffer) {
	if r.ID != "" {
		b.WriteString("id: " + r.ID + "\n")
	}
	if r.Event != "" {
		b.WriteString("event: " + r.Event + "\n")
	}
	for line := range strings.SplitSeq(r.Data, "\n") {
		b.WriteString("data: " + line + "\n")
	}
	b.WriteByte('\n')
}

// Decoder turns one protocol's raw events into canonical events (without
// Seq). It keeps only the state the protocol needs to address items (open
// blocks by index, calls by call_id); rules common to every protocol live
// in the Reducer. A Decoder must never panic on any input: malformed data
// becomes a diagnostic.
type Decoder interface {
	// Decode handles one raw event of a stream. The returned slice may be
	// reused by the next call: copy what you keep (Stream does).
	Decode(raw RawEvent) []Event
	// Finish is called at the end of the input. It reports what the
	// protocol can tell about how the stream ended (e.g. a finish_reason
	// without [DONE]); the Reducer then handles a missing terminal.
	Finish() []Event
}

// An AppendDecoder can build its events where the caller says, so that a
// Stream numbers them in place instead of copying each into storage of its
// own (an Event is ~300 bytes; the copy was a fifth of a decode).
type AppendDecoder interface {
	Decoder
	// DecodeAppend is Decode with the events appended to dst (of length
	// 0). The result belongs to the caller: the decoder keeps no reference
	// to it or to dst, and never writes to either again.
	DecodeAppend(dst []Event, raw RawEvent) []Event
}

// DecodeInto is DecodeAppend for a decoder that appends its events to
// *out: decode runs with *out pointed at dst, and *out gets its own
// storage back after.
func DecodeInto(out *[]Event, dst []Event, decode func() []Event) []Event {
	own := *out
	*out = dst
	events := decode()
	*out = own[:0]
	return events
}

// Protocol is one wire format: how a canonical request is encoded for it
// and how its responses are decoded.
type Protocol interface {
	// Name is the protocol's contract name, e.g. "openai-responses".
	Name() string
	// Framing says how a stream of this protocol is framed.
	Framing() Framing
	// Encode builds the HTTP request provider expects for req. It fails
	// when req asks for something the protocol cannot carry, and records
	// every degradation it makes.
	Encode(req *Request, provider string) (*HTTPRequest, error)
	// NewDecoder starts decoding one streamed response.
	NewDecoder() Decoder
	// DecodeBody decodes a whole non-streaming JSON response.
	DecodeBody(body []byte) []Event
	// DecodeError turns an HTTP error response into a canonical error.
	DecodeError(status int, h http.Header, body []byte) *APIError
}
