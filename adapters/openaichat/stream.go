package openaichat

import (
	"strconv"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
)

// Writing a rendered turn as Chat Completions' stream: chunk objects, one per
// SSE data line, then [DONE].

// chunker writes the chunks of one response, one after another into one
// buffer (adapters.EventWriter).
type chunker struct {
	*adapters.EventWriter
	p        protocol
	envelope string // everything before the choices array's contents
	usageNil bool   // OpenAI with include_usage: "usage":null on every chunk
	seed     uint64
	n        uint64 // chunks written, for the obfuscation padding
}

func (p protocol) newChunker(st simTurn, o adapters.ResponseOptions, events int) *chunker {
	e := `{"id":` + adapters.JSONString(st.id) + `,"object":"chat.completion.chunk","created":` + i64(st.created) + `,"model":` + adapters.JSONString(st.model)
	if p.deepseek {
		e += `,"system_fingerprint":"` + deepSeekFingerprint + `"`
	} else {
		e += `,"service_tier":"default","system_fingerprint":"` + openAIFingerprint + `"`
	}
	e += `,"choices":[`
	return &chunker{EventWriter: adapters.NewEventWriter(o.Buf, events, len(e)+128),
		p: p, envelope: e, usageNil: o.IncludeUsage && !p.deepseek, seed: o.Seed}
}

// obfuscation is OpenAI's random padding: a few base62 characters that vary
// the chunk length (deterministic here, from the seed and chunk number).
func (c *chunker) obfuscation() {
	w := adapters.SimWord(c.seed, saltObf+c.n<<20)
	c.n++
	var buf [22]byte
	d := wire.AppendDigits(buf[:0], wire.Base62, w, 11)
	d = wire.AppendDigits(d, wire.Base62, adapters.SimWord(0, w), 11) // SimWord(0, w) is the plain mix of w
	c.Buf = append(c.Buf, d[:1+w%15]...)
}

// end closes a chunk (usage, then OpenAI's obfuscation) and records it as
// an event.
func (c *chunker) end(ph adapters.Phase, usage string) {
	if usage != "" {
		c.Buf = append(c.Buf, `,"usage":`...)
		c.Buf = append(c.Buf, usage...)
	}
	if !c.p.deepseek {
		c.Buf = append(c.Buf, `,"obfuscation":"`...)
		c.obfuscation()
		c.Buf = append(c.Buf, '"')
	}
	c.Buf = append(c.Buf, '}')
	c.End("", ph)
}

// delta writes a choices[0] chunk whose delta is pre, then text as a JSON
// string unless it is empty, then post; finish is the raw finish_reason
// (null or a JSON string), usage the usage object to attach ("" for none).
func (c *chunker) delta(ph adapters.Phase, pre, text, post, finish, usage string) {
	if usage == "" && c.usageNil {
		usage = "null"
	}
	c.Buf = append(c.Buf, c.envelope...)
	c.Buf = append(c.Buf, `{"index":0,"delta":`...)
	c.Buf = append(c.Buf, pre...)
	if text != "" {
		c.Buf = adapters.AppendJSONString(c.Buf, text)
	}
	c.Buf = append(c.Buf, post...)
	c.Buf = append(c.Buf, `,"logprobs":null,"finish_reason":`...)
	c.Buf = append(c.Buf, finish...)
	c.Buf = append(c.Buf, `}]`...)
	c.end(ph, usage)
}

// usageChunk is the chunk with "choices":[] and the usage, before [DONE].
func (c *chunker) usageChunk(usage string) {
	c.Buf = append(c.Buf, c.envelope...)
	c.Buf = append(c.Buf, ']')
	c.end(adapters.PhaseUsage, usage)
}

// callStart is a call's first tool_calls fragment.
func callStart(it simItem) string {
	return `{"index":` + strconv.Itoa(it.index) + `,"id":` + adapters.JSONString(it.callID) + `,"type":"function","function":{"name":` +
		adapters.JSONString(it.name) + `,"arguments":""}}`
}

// callArgsPre is what comes before a later fragment's text.
func callArgsPre(index int) string {
	return `{"tool_calls":[{"index":` + strconv.Itoa(index) + `,"function":{"arguments":`
}

// StreamEvents renders a turn as the provider's stream (see the top of the
// file): the role chunk, the items' fragments, the finish chunk, (OpenAI
// with include_usage) the usage chunk, then [DONE].
func (p protocol) StreamEvents(t adapters.ModelTurn, o adapters.ResponseOptions) []adapters.WireEvent {
	st := p.render(t, o)
	frag := o.Fragmenter()
	// Each item's fragments first, so the events are counted and stored
	// in one array.
	frags := make([][]string, len(st.items))
	n := 4
	for i, it := range st.items {
		frags[i] = frag(it.text)
		n += len(frags[i]) + 1
	}
	c := p.newChunker(st, o, n)
	delta := func(ph adapters.Phase, d string) { c.delta(ph, d, "", "", "null", "") }

	// The role chunk.
	items := st.items
	var first adapters.ItemKind
	if len(items) > 0 {
		first = items[0].kind
	}
	switch {
	case p.deepseek && first == adapters.KindReasoning:
		delta(adapters.PhaseStart, `{"role":"assistant","content":null,"reasoning_content":""}`)
	case p.deepseek:
		delta(adapters.PhaseStart, `{"role":"assistant","content":""}`)
	case first == adapters.KindToolCall:
		delta(adapters.PhaseStart, `{"role":"assistant","content":null,"tool_calls":[`+callStart(items[0])+`],"refusal":null}`)
	case first == adapters.KindRefusal:
		delta(adapters.PhaseStart, `{"role":"assistant","content":null,"refusal":""}`)
	default:
		delta(adapters.PhaseStart, `{"role":"assistant","content":"","refusal":null}`)
	}

	for i, it := range items {
		var ph adapters.Phase
		var pre, post string
		switch it.kind {
		case adapters.KindReasoning:
			ph, pre, post = adapters.PhaseReasoning, `{"content":null,"reasoning_content":`, `}`
		case adapters.KindMessage:
			ph, pre, post = adapters.PhaseText, `{"content":`, `}`
			if st.thinks {
				post = `,"reasoning_content":null}`
			}
		case adapters.KindRefusal:
			ph, pre, post = adapters.PhaseText, `{"refusal":`, `}`
		case adapters.KindToolCall:
			if i > 0 || p.deepseek {
				delta(adapters.PhaseStart, `{"tool_calls":[`+callStart(it)+`]}`)
			}
			ph, pre, post = adapters.PhaseArgs, callArgsPre(it.index), `}}]}`
		default:
			continue
		}
		for _, f := range frags[i] {
			if f == "" {
				c.delta(ph, pre+`""`, "", post, "null", "")
				continue
			}
			c.delta(ph, pre, f, post, "null", "")
		}
	}

	// The finish chunk decides the stop: with [DONE] it is the terminal
	// (without it a client has no finish_reason at all).
	finish := adapters.JSONString(st.finish)
	if p.deepseek {
		c.delta(adapters.PhaseTerminal, `{"content":""}`, "", "", finish, st.usage)
	} else {
		c.delta(adapters.PhaseTerminal, `{}`, "", "", finish, "")
		if o.IncludeUsage {
			c.usageChunk(st.usage)
		}
	}
	c.Buf = append(c.Buf, "[DONE]"...)
	c.End("", adapters.PhaseTerminal)
	return c.Events()
}
