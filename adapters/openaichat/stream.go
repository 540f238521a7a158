package openaichat

import (
	"strconv"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
)

// Writing a rendered turn as Chat Completions' stream: chunk objects, one per
// SSE data line, then [DONE].

// chunker writes the chunks of one response. A stream is hundreds of
// chunks: they are written one after another into one buffer, and each
// event's data is a slice of it (done), not a string of its own.
type chunker struct {
	p        protocol
	envelope string // everything before the choices array's contents
	usageNil bool   // OpenAI with include_usage: "usage":null on every chunk
	seed     uint64
	n        uint64 // chunks written, for the obfuscation padding
	buf      []byte
	events   []adapters.WireEvent
	ends     []int // where each event's data ends in buf
}

func (p protocol) newChunker(st simTurn, o adapters.ResponseOptions, events int) *chunker {
	e := `{"id":` + adapters.JSONString(st.id) + `,"object":"chat.completion.chunk","created":` + i64(st.created) + `,"model":` + adapters.JSONString(st.model)
	if p.deepseek {
		e += `,"system_fingerprint":"` + deepSeekFingerprint + `"`
	} else {
		e += `,"service_tier":"default","system_fingerprint":"` + openAIFingerprint + `"`
	}
	e += `,"choices":[`
	return &chunker{p: p, envelope: e, usageNil: o.IncludeUsage && !p.deepseek, seed: o.Seed,
		buf: make([]byte, 0, events*(len(e)+128)), events: make([]adapters.WireEvent, 0, events), ends: make([]int, 0, events)}
}

// obfuscation is OpenAI's random padding: a few base62 characters that vary
// the chunk length (deterministic here, from the seed and chunk number).
func (c *chunker) obfuscation() {
	w := adapters.SimWord(c.seed, saltObf+c.n<<20)
	c.n++
	var buf [22]byte
	d := wire.AppendDigits(buf[:0], wire.Base62, w, 11)
	d = wire.AppendDigits(d, wire.Base62, adapters.SimWord(0, w), 11) // SimWord(0, w) is the plain mix of w
	c.buf = append(c.buf, d[:1+w%15]...)
}

// end closes a chunk (usage, then OpenAI's obfuscation) and records it as
// an event.
func (c *chunker) end(ph adapters.Phase, usage string) {
	if usage != "" {
		c.buf = append(c.buf, `,"usage":`...)
		c.buf = append(c.buf, usage...)
	}
	if !c.p.deepseek {
		c.buf = append(c.buf, `,"obfuscation":"`...)
		c.obfuscation()
		c.buf = append(c.buf, '"')
	}
	c.buf = append(c.buf, '}')
	c.record(ph)
}

func (c *chunker) record(ph adapters.Phase) {
	c.events = append(c.events, adapters.WireEvent{Phase: ph})
	c.ends = append(c.ends, len(c.buf))
}

// delta writes a choices[0] chunk whose delta is pre, then text as a JSON
// string unless it is empty, then post; finish is the raw finish_reason
// (null or a JSON string), usage the usage object to attach ("" for none).
func (c *chunker) delta(ph adapters.Phase, pre, text, post, finish, usage string) {
	if usage == "" && c.usageNil {
		usage = "null"
	}
	c.buf = append(c.buf, c.envelope...)
	c.buf = append(c.buf, `{"index":0,"delta":`...)
	c.buf = append(c.buf, pre...)
	if text != "" {
		c.buf = adapters.AppendJSONString(c.buf, text)
	}
	c.buf = append(c.buf, post...)
	c.buf = append(c.buf, `,"logprobs":null,"finish_reason":`...)
	c.buf = append(c.buf, finish...)
	c.buf = append(c.buf, `}]`...)
	c.end(ph, usage)
}

// usageChunk is the chunk with "choices":[] and the usage, before [DONE].
func (c *chunker) usageChunk(usage string) {
	c.buf = append(c.buf, c.envelope...)
	c.buf = append(c.buf, ']')
	c.end(adapters.PhaseUsage, usage)
}

// done is the events, their data slices of the buffer, which is not
// written again (wire.View: no copy).
func (c *chunker) done() []adapters.WireEvent {
	all, from := wire.View(c.buf), 0
	for i, to := range c.ends {
		c.events[i].Data = all[from:to]
		from = to
	}
	return c.events
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
	c.buf = append(c.buf, "[DONE]"...)
	c.record(adapters.PhaseTerminal)
	return c.done()
}
