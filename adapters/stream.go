package adapters

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/modelwire/modelwire/adapters/sse"
)

// Step is one raw event and the canonical events derived from it. The end
// of the input is a step with Index -1 and no raw event.
type Step struct {
	Index  int      `json:"index"`
	Raw    RawEvent `json:"raw"`
	Events []Event  `json:"events"`
}

// Stream decodes one response: the protocol's decoder, then the shared
// reducer. Feed it raw events as they arrive; it returns the canonical
// events each one produced.
type Stream struct {
	protocol Protocol
	dec      Decoder
	adec     AppendDecoder // dec, when it is one
	red      *Reducer
	seenIDs  map[string]struct{}
	raws     int
	reuse    bool // ReuseEvents
}

// NewStream starts decoding one response of protocol p.
func NewStream(p Protocol) *Stream {
	s := &Stream{protocol: p, dec: p.NewDecoder(), red: NewReducer(p.Name())}
	s.adec, _ = s.dec.(AppendDecoder)
	return s
}

// ReuseEvents tells the stream that its caller is done with the events
// Feed returns (and a ReadStream step's) once it feeds the next raw event,
// as a caller that writes each step out or only counts is: their storage
// is then reused for the next raw event's instead of taking new memory,
// which was most of a decode's allocation. Events the caller keeps must
// be copied. The Reducer's state (items, summary) is not affected.
func (s *Stream) ReuseEvents() { s.reuse = true }

// Feed decodes one raw event. An event whose SSE id was already seen is a
// duplicate: reported, not decoded again.
func (s *Stream) Feed(raw RawEvent) []Event {
	s.raws++
	if s.reuse {
		s.red.slabAt = 0 // the last raw event's events are done with
	}
	if raw.ID != "" {
		if s.seenIDs == nil {
			s.seenIDs = map[string]struct{}{}
		}
		if _, dup := s.seenIDs[raw.ID]; dup {
			return s.red.Apply([]Event{Diag(DiagDuplicateEvent, fmt.Sprintf("event id %q seen before; dropped", raw.ID))})
		}
		s.seenIDs[raw.ID] = struct{}{}
	}
	if s.adec != nil {
		return s.red.applyOwned(s.adec.DecodeAppend(s.red.region(), raw))
	}
	return s.red.Apply(s.dec.Decode(raw))
}

// End finishes the response: the decoder's view of how it ended, extra
// diagnostics from the caller (framing, read errors), then the reducer's.
func (s *Stream) End(diags ...Event) []Event {
	out := s.red.Apply(append(diags, s.dec.Finish()...))
	return append(out, s.red.End()...)
}

// FeedBody decodes a whole non-streaming body and ends the response.
func (s *Stream) FeedBody(body []byte) []Event {
	s.raws++
	out := s.red.Apply(s.protocol.DecodeBody(body))
	return append(out, s.red.End()...)
}

// Reducer exposes the response state.
func (s *Stream) Reducer() *Reducer { return s.red }

// Summary is the response summary so far.
func (s *Stream) Summary() Summary { return s.red.Summary() }

// MaxEventSize bounds one raw event (an SSE event or an NDJSON line).
const MaxEventSize = 16 << 20

// ReadStream reads a streamed body with p's framing and calls fn once per
// raw event and once at the end (Index -1). A read error or an oversize
// event ends the stream with a diagnostic rather than an error: whatever
// arrived before it is kept. Only an error from fn stops it early.
func ReadStream(p Protocol, s *Stream, r io.Reader, fn func(Step) error) error {
	var endDiags []Event
	index := 0
	deliver := func(raw RawEvent) error {
		step := Step{Index: index, Raw: raw, Events: s.Feed(raw)}
		index++
		return fn(step)
	}
	switch p.Framing() {
	case FramingNDJSON:
		br := bufio.NewReaderSize(r, 64<<10)
		var line []byte
		for {
			chunk, err := br.ReadSlice('\n')
			line = append(line, chunk...)
			if errors.Is(err, bufio.ErrBufferFull) {
				if len(line) > MaxEventSize {
					endDiags = append(endDiags, Diag(DiagEventTooLarge, fmt.Sprintf("a line longer than %d bytes; the rest of the stream was not read", MaxEventSize)))
					break
				}
				continue
			}
			if t := bytes.TrimSpace(line); len(t) > 0 {
				if err == io.EOF && !bytes.HasSuffix(line, []byte("\n")) {
					// A last line without its newline is still a whole
					// JSON object if it parses; otherwise it was cut.
					if !jsonComplete(t) {
						endDiags = append(endDiags, Diag(DiagDiscardedTail, fmt.Sprintf("%d bytes of an unterminated last line discarded", len(t))))
						break
					}
				}
				if ferr := deliver(RawEvent{Data: toValidUTF8(t)}); ferr != nil {
					return ferr
				}
			}
			line = line[:0]
			if err != nil {
				if err != io.EOF {
					endDiags = append(endDiags, Diag(DiagReadError, err.Error()))
				}
				break
			}
		}
	default:
		sr := sse.NewReader(r)
		sr.SetMaxEventSize(MaxEventSize)
		for {
			ev, err := sr.Next()
			if err != nil {
				if errors.Is(err, sse.ErrEventTooLarge) {
					endDiags = append(endDiags, Diag(DiagEventTooLarge, err.Error()))
				} else if err != io.EOF {
					endDiags = append(endDiags, Diag(DiagReadError, err.Error()))
				}
				break
			}
			raw := RawEvent{Event: ev.Type, Data: ev.Data}
			if ev.HasID {
				raw.ID = ev.ID
			}
			if ferr := deliver(raw); ferr != nil {
				return ferr
			}
		}
		st := sr.Stats()
		if st.BOMStripped {
			endDiags = append(endDiags, Diag(DiagBOMStripped, "a leading byte order mark was removed"))
		}
		if st.BareCR {
			endDiags = append(endDiags, Diag(DiagBareCR, "lines ended by CR alone were read"))
		}
		if st.InvalidUTF8 {
			endDiags = append(endDiags, Diag(DiagInvalidUTF8, "ill-formed UTF-8 was replaced by U+FFFD"))
		}
		if st.DiscardedTail > 0 {
			endDiags = append(endDiags, Diag(DiagDiscardedTail, fmt.Sprintf("%d bytes after the last complete event were discarded", st.DiscardedTail)))
		}
	}
	return fn(Step{Index: -1, Events: s.End(endDiags...)})
}

func jsonComplete(b []byte) bool { return json.Valid(b) }

// LooksLikeStream tells an SSE body from a JSON body by its first bytes:
// a JSON body starts with '{' or '[' after white space and a BOM.
func LooksLikeStream(head []byte) bool {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	head = bytes.TrimLeft(head, " \t\r\n")
	return len(head) == 0 || (head[0] != '{' && head[0] != '[')
}

func toValidUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
}
