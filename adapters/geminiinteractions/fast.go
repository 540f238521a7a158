package geminiinteractions

import (
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
)

// Nearly every event of a stream is a step.delta in one of three shapes,
// as the API sends them (compact, keys in this order):
//
//	{"index":N,"delta":{"text":"S","type":"text"},"event_type":"step.delta"}
//	{"index":N,"delta":{"content":{"text":"S","type":"text"},"type":"thought_summary"},"event_type":"step.delta"}
//	{"index":N,"delta":{"arguments":"S","type":"arguments_delta"},"event_type":"step.delta"}
//
// fastStepDelta reads those in a single pass, checking while it reads all
// that wire.Members would (the literal bytes, the index's digits, the
// string's escapes and control bytes, nothing after the last brace), so a
// payload it accepts is valid JSON with exactly these members. Any other
// byte sequence, including the same JSON in another order or with white
// space, returns ok == false and takes the general path: members, then a
// skim of the delta, then one of its content. TestFastPathAgrees decodes
// streams both ways and compares every event.
const (
	fastIndex = `{"index":`
	fastDelta = `,"delta":{`
	fastTail  = `,"event_type":"step.delta"}`
)

// The shapes: what comes before the string and what closes the delta.
var fastShapes = [...]struct {
	head, tail string
	typ        string // the delta's type
}{
	{`"text":`, `,"type":"text"}`, "text"},
	{`"content":{"text":`, `,"type":"text"},"type":"thought_summary"}`, "thought_summary"},
	{`"arguments":`, `,"type":"arguments_delta"}`, "arguments_delta"},
}

// fastStepDelta returns the step index, the delta's type and its string.
func fastStepDelta(data string) (index int64, typ, value string, ok bool) {
	if !strings.HasPrefix(data, fastIndex) {
		return
	}
	index, i, isIndex := wire.SmallIndex(data, len(fastIndex))
	if !isIndex || !strings.HasPrefix(data[i:], fastDelta) {
		return 0, "", "", false
	}
	i += len(fastDelta)
	for _, sh := range fastShapes {
		if !strings.HasPrefix(data[i:], sh.head) {
			continue
		}
		i += len(sh.head)
		value, end, valid := wire.ReadString(data, i)
		if !valid || !strings.HasPrefix(data[end:], sh.tail) || data[end+len(sh.tail):] != fastTail {
			return 0, "", "", false
		}
		return index, sh.typ, value, true
	}
	return 0, "", "", false
}

// decodeFast applies a delta read by fastStepDelta when its step is open
// and of the kind the delta needs; false leaves the event to the general
// path (which reports whatever is out of order).
func (d *decoder) decodeFast(data string) bool {
	index, typ, value, ok := fastStepDelta(data)
	if !ok {
		return false
	}
	st := d.hot
	if st == nil || d.hotIndex != index {
		st = d.steps[index]
		d.hot, d.hotIndex = st, index
	}
	if st == nil || !st.open || st.skip {
		return false
	}
	switch typ {
	case "text":
		if st.kind != adapters.KindMessage {
			return false
		}
		d.textOf(st, "text", value)
	case "thought_summary":
		d.textOf(st, "text", value)
	case "arguments_delta":
		if st.kind != adapters.KindToolCall {
			return false
		}
		st.gotArgs = true
		if value != "" {
			d.emit(adapters.Event{Type: adapters.EvToolArgsDelta, ItemID: st.itemID, CallID: st.callID, Delta: value})
		}
	}
	return true
}
