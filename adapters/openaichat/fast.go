package openaichat

import (
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
)

// Nearly every chunk of a stream is the envelope of the chunk before it
// (validated then; see chunk) followed by one delta of choice 0 in one of
// four shapes, as OpenAI and DeepSeek send them (compact, keys in this
// order):
//
//	…"choices":[{"index":0,"delta":{"content":"S"},"logprobs":null,"finish_reason":null}]…
//	…"choices":[{"index":0,"delta":{"content":"S","reasoning_content":null},…
//	…"choices":[{"index":0,"delta":{"content":null,"reasoning_content":"S"},…
//	…"choices":[{"index":0,"delta":{"tool_calls":[{"index":N,"function":{"arguments":"S"}}]},…
//
// and then `}` or `,"usage":null,"obfuscation":"X"}`. fast reads those in
// one pass, checking as it reads all that the validator would (the
// literal bytes, the digits, the strings' escapes and control bytes,
// nothing after the last brace), and applies them as the general path
// does. Anything else, including the same JSON in another order or with
// white space, returns ok == false before any state changed and takes
// the general path. TestFastPathAgrees compares the two event by event.
const (
	fastChoice     = `[{"index":0,"delta":{`
	fastChoiceEnd  = `},"logprobs":null,"finish_reason":null}]`
	fastContent    = `"content":`
	fastReasonNull = `,"reasoning_content":null`
	fastNullReason = `"content":null,"reasoning_content":`
	fastToolArgs   = `"tool_calls":[{"index":`
	fastFunction   = `,"function":{"arguments":`
	fastObfuscated = `,"usage":null,"obfuscation":`
)

// fastDelta is what fast read: which lane and the delta's text.
type fastDelta struct {
	kind  byte // 'c' content, 'r' reasoning, 't' tool call arguments
	index int64
	text  string
}

func (d *decoder) fast(data string, out []adapters.Event) ([]adapters.Event, bool) {
	// The envelope must be the one validated before, of the response
	// already started, so that nothing but the delta is new.
	if d.prefix == "" || !d.started || d.prefixID != d.responseID || !strings.HasPrefix(data, d.prefix) {
		return out, false
	}
	f, ok := readFast(data, len(d.prefix))
	if !ok {
		return out, false
	}
	switch f.kind {
	case 'c':
		return d.textDelta(&d.text, itemMessage, adapters.KindMessage, adapters.EvTextDelta, f.text, out), true
	case 'r':
		return d.textDelta(&d.reasoning, itemReasoning, adapters.KindReasoning, adapters.EvReasoningDelta, f.text, out), true
	}
	for _, c := range d.calls {
		if c.index == f.index {
			if f.text != "" {
				out = append(out, adapters.Event{Type: adapters.EvToolArgsDelta, ItemID: c.id, CallID: c.callID, Delta: f.text})
			}
			return out, true
		}
	}
	return out, false // a new call: the general path opens it
}

// readFast reads data from i, just after the envelope's `"choices":`.
func readFast(data string, i int) (f fastDelta, ok bool) {
	s := data[i:]
	if !strings.HasPrefix(s, fastChoice) {
		return f, false
	}
	i = len(fastChoice)
	switch {
	case strings.HasPrefix(s[i:], fastNullReason):
		f.kind = 'r'
		if f.text, i, ok = wire.ReadString(s, i+len(fastNullReason)); !ok {
			return f, false
		}
	case strings.HasPrefix(s[i:], fastContent):
		f.kind = 'c'
		if f.text, i, ok = wire.ReadString(s, i+len(fastContent)); !ok {
			return f, false
		}
		if strings.HasPrefix(s[i:], fastReasonNull) {
			i += len(fastReasonNull)
		}
	case strings.HasPrefix(s[i:], fastToolArgs):
		f.kind = 't'
		if f.index, i, ok = wire.SmallIndex(s, i+len(fastToolArgs)); !ok || !strings.HasPrefix(s[i:], fastFunction) {
			return f, false
		}
		if f.text, i, ok = wire.ReadString(s, i+len(fastFunction)); !ok || !strings.HasPrefix(s[i:], "}}]") {
			return f, false
		}
		i += len("}}]")
	default:
		return f, false
	}
	if !strings.HasPrefix(s[i:], fastChoiceEnd) {
		return f, false
	}
	i += len(fastChoiceEnd)
	if s[i:] == "}" {
		return f, true
	}
	if !strings.HasPrefix(s[i:], fastObfuscated) {
		return f, false
	}
	end, valid := wire.StringEnd(s, i+len(fastObfuscated))
	return f, valid && s[end:] == "}"
}
