package gemini

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
)

// Item ids. Gemini gives parts no ids; the decoder keeps one message lane
// and one reasoning lane per response (text parts are increments of them)
// and numbers the calls.
const (
	textItemID    = "text-0"
	thoughtItemID = "thought-0"
)

// lane is the message or the reasoning item, open from its first part to
// the chunk that carries finishReason.
type lane struct {
	id    string
	kind  adapters.ItemKind
	open  bool
	order int    // when it was opened, to close lanes in output order
	sig   string // the last thoughtSignature seen on one of its parts
}

// chunkFacts is what one chunk says, read before anything is emitted so
// that a chunk found malformed at its last byte changes nothing. Strings
// are slices of the chunk, or unescaped copies.
type chunkFacts struct {
	parts                   []partFacts
	finish, finishMessage   string
	responseID, model       string
	usage, err, blockReason string
	firstUnknown            string
	known                   bool
	continuation            bool // the candidate carries a continuationToken
	extraCandidate          int  // index of the first candidate after the first, 0 if none
}

// partFacts is one Part of the first candidate.
type partFacts struct {
	text, sig, other   string
	hasText, hasSig    bool
	thought, call      bool
	name, callID, args string
}

// decoder decodes one streamGenerateContent response. Every chunk is a
// whole GenerateContentResponse read by a cursor in one validating pass:
// nothing is unmarshalled into structs, and text without escapes is a
// slice of the chunk, not a copy.
type decoder struct {
	out   []adapters.Event // reused between Decode calls; the Reducer copies
	facts chunkFacts       // reused between chunks

	started    bool
	responseID string
	model      string

	text, thought lane
	opened        int

	calls    int
	callIDs  map[string]struct{}
	hasCalls bool

	usage string // the last usageMetadata, raw (a slice of its chunk)
	done  bool   // the terminal was emitted
	// tail is the tail of the last chunk of the fast shape the general
	// path decoded (see fast); general turns the fast path off, for the
	// tests that compare the two.
	tail    string
	general bool

	extraCandidates bool
}

// DecodeAppend is Decode building the events in dst (adapters.AppendDecoder).
func (d *decoder) DecodeAppend(dst []adapters.Event, raw adapters.RawEvent) []adapters.Event {
	return adapters.DecodeInto(&d.out, dst, func() []adapters.Event { return d.Decode(raw) })
}

// Decode handles one SSE event: one GenerateContentResponse chunk.
func (d *decoder) Decode(raw adapters.RawEvent) []adapters.Event {
	d.out = d.out[:0]
	if d.general || !d.fast(raw.Data) {
		d.chunk(raw.Data)
		if !d.general {
			d.keepTail(raw.Data)
		}
	}
	return d.out
}

// Finish reports a stream that ended without finishReason: the last usage
// seen is still the provider's word on what was spent. The Reducer then
// records the cut and ends the response as unknown.
func (d *decoder) Finish() []adapters.Event {
	d.out = d.out[:0]
	if !d.done && d.usage != "" {
		d.emitUsage()
	}
	return d.out
}

func (d *decoder) emit(ev adapters.Event) { d.out = append(d.out, ev) }

func (d *decoder) chunk(data string) {
	f := &d.facts
	*f = chunkFacts{parts: f.parts[:0]}
	c := cursor{s: data}
	first := c.peek()
	if first == '{' {
		f.read(&c)
	} else {
		c.skip()
	}
	if !c.end() {
		d.emit(adapters.Diag(adapters.DiagMalformedEvent, "chunk is not valid JSON: "+clip(data)))
		return
	}
	if first != '{' {
		d.emit(adapters.Event{Type: adapters.EvUnknown, RawType: jsonKind(first)})
		return
	}
	if f.err != "" {
		d.errorChunk(gjson.Parse(f.err))
		return
	}
	if !f.known {
		if f.firstUnknown != "" {
			d.emit(adapters.Event{Type: adapters.EvUnknown, RawType: f.firstUnknown})
		}
		return // {} is an empty chunk: nothing to say
	}
	d.announce(f.responseID, f.model)
	if f.extraCandidate > 0 && !d.extraCandidates {
		d.extraCandidates = true
		d.emit(adapters.Event{Type: adapters.EvUnknown, RawType: "candidates[" + strconv.Itoa(f.extraCandidate) + "]"})
	}
	for i := range f.parts {
		d.part(&f.parts[i])
	}
	if f.usage != "" {
		d.usage = f.usage
	}
	if f.blockReason != "" {
		// The prompt was blocked: no candidate comes.
		d.terminate(adapters.Terminal(adapters.StatusRefused, adapters.StopRefusal, "blockReason:"+f.blockReason))
		return
	}
	if f.finish == "FINISH_REASON_UNSPECIFIED" && f.continuation {
		// go-genai continuation.go: with a continuationToken the backend
		// marks intermediate checkpoint chunks UNSPECIFIED; not an end.
		return
	}
	if f.finish != "" {
		d.finish(f.finish, f.finishMessage)
	}
}

// read takes the facts out of a GenerateContentResponse object.
func (f *chunkFacts) read(c *cursor) {
	c.object(func(key string) bool {
		switch key {
		case "candidates":
			f.candidates(c)
		case "usageMetadata":
			if c.peek() != '{' {
				return false
			}
			f.usage = c.raw()
		case "promptFeedback":
			c.object(func(k string) bool {
				if k == "blockReason" {
					f.blockReason = c.str()
					return true
				}
				return false
			})
		case "responseId":
			f.responseID = c.str()
		case "modelVersion":
			f.model = c.str()
		case "error":
			f.err = c.raw()
		case "createTime", "modelStatus", "sdkHttpResponse", "automaticFunctionCallingHistory", "parsed":
			return false
		default:
			if f.firstUnknown == "" {
				f.firstUnknown = key
			}
			return false
		}
		f.known = true
		return true
	})
}

// candidates reads the first candidate; later ones are only noted.
func (f *chunkFacts) candidates(c *cursor) {
	c.array(func(i int) bool {
		if i > 0 {
			if f.extraCandidate == 0 {
				f.extraCandidate = i
			}
			return false
		}
		c.object(func(key string) bool {
			switch key {
			case "content":
				c.object(func(k string) bool {
					if k != "parts" {
						return false
					}
					c.array(func(int) bool {
						f.parts = append(f.parts, partFacts{})
						f.parts[len(f.parts)-1].read(c)
						return true
					})
					return true
				})
			case "finishReason":
				f.finish = c.str()
			case "finishMessage":
				f.finishMessage = c.str()
			case "continuationToken":
				f.continuation = true
				return false
			default:
				return false
			}
			return true
		})
		return true
	})
}

// read takes one Part. Its fields may come in any order ("thought": true
// follows "text").
func (p *partFacts) read(c *cursor) {
	c.object(func(k string) bool {
		switch k {
		case "text":
			p.text, p.hasText = c.str(), true
		case "thought":
			p.thought = c.peek() == 't'
			return false
		case "thoughtSignature":
			p.sig, p.hasSig = c.str(), true
		case "functionCall":
			p.call = true
			c.object(func(k string) bool {
				switch k {
				case "name":
					p.name = c.str()
				case "id":
					p.callID = c.str()
				case "args":
					p.args = c.raw()
				default:
					return false
				}
				return true
			})
		case "partMetadata", "videoMetadata", "mediaResolution":
			return false
		default:
			if p.other == "" {
				p.other = k
			}
			return false
		}
		return true
	})
}

// announce emits response.started on the first chunk, and again when a
// later chunk brings an id the first one lacked.
func (d *decoder) announce(rid, mv string) {
	switch {
	case !d.started:
		d.started = true
		d.responseID, d.model = strings.Clone(rid), strings.Clone(mv)
		d.emit(adapters.Event{Type: adapters.EvResponseStarted, ResponseID: d.responseID, Model: d.model})
	case rid != "" && rid != d.responseID:
		if d.responseID != "" {
			d.emit(adapters.Diag("response_id_changed", fmt.Sprintf("chunk has responseId %q, the response began as %q", rid, d.responseID)))
			return
		}
		d.responseID = strings.Clone(rid)
		if mv != "" {
			d.model = strings.Clone(mv)
		}
		d.emit(adapters.Event{Type: adapters.EvResponseStarted, ResponseID: d.responseID, Model: d.model})
	case mv != "" && d.model == "":
		d.model = strings.Clone(mv)
		d.emit(adapters.Event{Type: adapters.EvResponseStarted, ResponseID: d.responseID, Model: d.model})
	}
}

// part emits one Part: text or thought increments, or a whole call.
func (d *decoder) part(p *partFacts) {
	switch {
	case p.call:
		d.call(p)
	case p.hasText || p.hasSig || p.thought:
		l := &d.text
		if p.thought {
			l = &d.thought
		}
		if p.text == "" && p.sig == "" {
			return // an empty increment opens nothing
		}
		if !l.open {
			d.openLane(l, p.thought)
		}
		if p.sig != "" {
			l.sig = strings.Clone(p.sig)
		}
		if p.text == "" {
			return
		}
		ev := adapters.Event{Type: adapters.EvTextDelta, ItemID: l.id, Delta: p.text}
		if p.thought {
			ev.Type = adapters.EvReasoningDelta
		}
		d.emit(ev)
	case p.other != "":
		// inlineData, executableCode, codeExecutionResult, fileData,
		// server-side toolCall/toolResponse: shown as data, not decoded.
		d.emit(adapters.Event{Type: adapters.EvUnknown, RawType: "part." + p.other})
	}
}

func (d *decoder) openLane(l *lane, thought bool) {
	if thought {
		*l = lane{id: thoughtItemID, kind: adapters.KindReasoning}
	} else {
		*l = lane{id: textItemID, kind: adapters.KindMessage}
	}
	l.open = true
	d.opened++
	l.order = d.opened
	d.emit(adapters.Event{Type: adapters.EvItemStarted, ItemID: l.id, Kind: string(l.kind)})
}

// call emits a whole functionCall: started, its args as one delta, done
// (with the part's thoughtSignature). Gemini sends args as a JSON object;
// its text goes to the Reducer as it came.
func (d *decoder) call(p *partFacts) {
	n := d.calls
	d.calls++
	d.hasCalls = true
	itemID := "call-" + strconv.Itoa(n)
	callID := p.callID
	if callID == "" {
		callID = SyntheticCallIDPrefix + strconv.Itoa(n)
	} else {
		callID = strings.Clone(callID)
		if d.callIDs == nil {
			d.callIDs = map[string]struct{}{}
		}
		if _, dup := d.callIDs[callID]; dup {
			d.emit(adapters.Diag(adapters.DiagConflictingCallID, fmt.Sprintf("functionCall id %q is used by an earlier call of this response", callID)))
		}
		d.callIDs[callID] = struct{}{}
	}
	args := p.args
	if args == "" {
		args = "{}" // a call without args: the function takes none
	}
	d.emit(adapters.Event{Type: adapters.EvItemStarted, ItemID: itemID, Kind: string(adapters.KindToolCall), CallID: callID, Name: strings.Clone(p.name)})
	d.emit(adapters.Event{Type: adapters.EvToolArgsDelta, ItemID: itemID, CallID: callID, Delta: args})
	d.emit(adapters.Event{Type: adapters.EvItemDone, ItemID: itemID, CallID: callID, Signature: strings.Clone(p.sig)})
}

// finish ends the response at the chunk carrying finishReason: the lanes
// close, usage, then the terminal.
func (d *decoder) finish(reason, message string) {
	status, stop := stopReason(reason, d.hasCalls)
	d.closeLanes()
	t := adapters.Terminal(status, stop, reason)
	if status == adapters.StatusFailed {
		if message == "" {
			message = "the model's function call was rejected (" + reason + ")"
		}
		t.Error = &adapters.APIError{Type: reason, Message: message}
	}
	d.terminate(t)
}

// terminate emits the usage, then the terminal.
func (d *decoder) terminate(t adapters.Event) {
	if d.usage != "" {
		d.emitUsage()
	}
	d.emit(t)
	d.done = true
}

func (d *decoder) closeLanes() {
	first, second := &d.thought, &d.text
	if second.order < first.order {
		first, second = second, first
	}
	for _, l := range []*lane{first, second} {
		if l.open {
			l.open = false
			d.emit(adapters.Event{Type: adapters.EvItemDone, ItemID: l.id, Signature: l.sig})
		}
	}
}

// errorChunk handles a {"error":{code,message,status}} payload after 200:
// an error_event diagnostic, then a failed terminal. Open lanes stay open,
// so the Reducer marks them incomplete.
func (d *decoder) errorChunk(errv gjson.Result) {
	e := googleError(errv)
	d.emit(adapters.Diag(adapters.DiagErrorEvent, e.Error()))
	t := adapters.Terminal(adapters.StatusFailed, adapters.StopError, e.Type)
	t.Error = e
	d.terminate(t)
}

// emitUsage normalises usageMetadata (contract "Summary object"): input is
// promptTokenCount (cached tokens included) plus toolUsePromptTokenCount
// (the results of server tools the model read, billed as input); output
// is candidates plus thoughts (candidatesTokenCount leaves the thoughts
// out). Google's JSON leaves out counters that are zero, so a missing
// counter is 0; there is no cache-write counter.
func (d *decoder) emitUsage() {
	u := gjson.Parse(d.usage)
	prompt := u.Get("promptTokenCount").Int() + u.Get("toolUsePromptTokenCount").Int()
	cached := u.Get("cachedContentTokenCount").Int()
	cands := u.Get("candidatesTokenCount").Int()
	thoughts := u.Get("thoughtsTokenCount").Int()
	usage := &adapters.Usage{
		InputTokens:     adapters.Int(prompt),
		OutputTokens:    adapters.Int(cands + thoughts),
		CacheReadTokens: adapters.Int(cached),
		ReasoningTokens: adapters.Int(thoughts),
		ProviderUsage:   []byte(d.usage),
	}
	d.emit(adapters.Event{Type: adapters.EvUsage, Usage: usage})
}

// stopReason maps finishReason by the contract's table. LANGUAGE (an
// unsupported language stopped generation) is incomplete per protocols.md
// §8.1, reported as truncated: the text stops short. CONTINUATION (the
// per-request token limit was reached and the response can be continued
// with its continuationToken) is incomplete/pause, like Anthropic's
// pause_turn. Unknown values are unknown.
func stopReason(reason string, hasCalls bool) (adapters.Status, adapters.StopReason) {
	switch reason {
	case "STOP":
		if hasCalls {
			return adapters.StatusCompleted, adapters.StopToolCall
		}
		return adapters.StatusCompleted, adapters.StopFinal
	case "MAX_TOKENS", "LANGUAGE":
		return adapters.StatusIncomplete, adapters.StopTruncated
	case "CONTINUATION":
		return adapters.StatusIncomplete, adapters.StopPause
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
		return adapters.StatusRefused, adapters.StopRefusal
	case "MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS":
		return adapters.StatusFailed, adapters.StopError
	}
	// OTHER, FINISH_REASON_UNSPECIFIED, IMAGE_OTHER, NO_IMAGE, new values.
	return adapters.StatusUnknown, adapters.StopUnknown
}

// jsonKind names the type of a JSON value by its first byte.
func jsonKind(first byte) string {
	switch first {
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// clip shortens quoted input for a diagnostic, at a rune boundary.
func clip(s string) string {
	const n = 120
	if len(s) <= n {
		return strconv.Quote(s)
	}
	i := n
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return strconv.Quote(s[:i]) + "…"
}
