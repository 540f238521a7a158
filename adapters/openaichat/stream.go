package openaichat

import (
	"strconv"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
)

// Writing a rendered turn as Chat Completions' stream: chunk objects, one per
// SSE data line, then [DONE].

// chunker writes the chunks of one response.
type chunker struct {
	p        protocol
	envelope string // everything before the choices array's contents
	usageNil bool   // OpenAI with include_usage: "usage":null on every chunk
	seed     uint64
	n        uint64 // chunks written, for the obfuscation padding
}

func (p protocol) newChunker(st simTurn, o adapters.ResponseOptions) *chunker {
	e := `{"id":` + adapters.JSONString(st.id) + `,"object":"chat.completion.chunk","created":` + i64(st.created) + `,"model":` + adapters.JSONString(st.model)
	if p.deepseek {
		e += `,"system_fingerprint":"` + deepSeekFingerprint + `"`
	} else {
		e += `,"service_tier":"default","system_fingerprint":"` + openAIFingerprint + `"`
	}
	return &chunker{p: p, envelope: e + `,"choices":[`, usageNil: o.IncludeUsage && !p.deepseek, seed: o.Seed}
}

// obfuscation is OpenAI's random padding: a few base62 characters that vary
// the chunk length (deterministic here, from the seed and chunk number).
func (c *chunker) obfuscation(b *strings.Builder) {
	w := adapters.SimWord(c.seed, saltObf+c.n<<20)
	c.n++
	var buf [22]byte
	d := wire.AppendDigits(buf[:0], wire.Base62, w, 11)
	d = wire.AppendDigits(d, wire.Base62, adapters.SimWord(0, w), 11) // SimWord(0, w) is the plain mix of w
	b.Write(d[:1+w%15])
}

// tail closes a chunk: usage, then (OpenAI) the obfuscation.
func (c *chunker) tail(b *strings.Builder, usage string) {
	if usage != "" {
		b.WriteString(`,"usage":`)
		b.WriteString(usage)
	}
	if !c.p.deepseek {
		b.WriteString(`,"obfuscation":"`)
		c.obfuscation(b)
		b.WriteByte('"')
	}
	b.WriteByte('}')
}

// chunk is one choices[0] chunk; finish is the raw finish_reason (null or
// a JSON string), usage the usage object to attach ("" for none). A
// stream is hundreds of chunks, so each is written into one buffer of its
// final size, not concatenated piece by piece.
func (c *chunker) chunk(delta, finish, usage string) string {
	if usage == "" && c.usageNil {
		usage = "null"
	}
	var b strings.Builder
	b.Grow(len(c.envelope) + len(delta) + len(finish) + len(usage) + 96)
	b.WriteString(c.envelope)
	b.WriteString(`{"index":0,"delta":`)
	b.WriteString(delta)
	b.WriteString(`,"logprobs":null,"finish_reason":`)
	b.WriteString(finish)
	b.WriteString(`}]`)
	c.tail(&b, usage)
	return b.String()
}

// usageChunk is the chunk with "choices":[] and the usage, before [DONE].
func (c *chunker) usageChunk(usage string) string {
	var b strings.Builder
	b.Grow(len(c.envelope) + len(usage) + 64)
	b.WriteString(c.envelope)
	b.WriteByte(']')
	c.tail(&b, usage)
	return b.String()
}

// callStart is a call's first tool_calls fragment; callArgs a later one.
func callStart(it simItem) string {
	return `{"index":` + strconv.Itoa(it.index) + `,"id":` + adapters.JSONString(it.callID) + `,"type":"function","function":{"name":` +
		adapters.JSONString(it.name) + `,"arguments":""}}`
}

func callArgs(index int, frag string) string {
	return `{"index":` + strconv.Itoa(index) + `,"function":{"arguments":` + adapters.JSONString(frag) + `}}`
}

// StreamEvents renders a turn as the provider's stream (see the top of the
// file): the role chunk, the items' fragments, the finish chunk, (OpenAI
// with include_usage) the usage chunk, then [DONE].
func (p protocol) StreamEvents(t adapters.ModelTurn, o adapters.ResponseOptions) []adapters.WireEvent {
	st := p.render(t, o)
	frag := o.Fragmenter()
	c := p.newChunker(st, o)
	// Each item's fragments first, so the events are counted and stored
	// in one array (a stream is hundreds of them).
	frags := make([][]string, len(st.items))
	n := 4
	for i, it := range st.items {
		frags[i] = frag(it.text)
		n += len(frags[i]) + 1
	}
	out := make([]adapters.WireEvent, 0, n)
	emit := func(ph adapters.Phase, data string) {
		out = append(out, adapters.WireEvent{Data: data, Phase: ph})
	}
	delta := func(ph adapters.Phase, d string) { emit(ph, c.chunk(d, "null", "")) }

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
		switch it.kind {
		case adapters.KindReasoning:
			for _, f := range frags[i] {
				delta(adapters.PhaseReasoning, `{"content":null,"reasoning_content":`+adapters.JSONString(f)+`}`)
			}
		case adapters.KindMessage:
			after := ""
			if st.thinks {
				after = `,"reasoning_content":null`
			}
			for _, f := range frags[i] {
				delta(adapters.PhaseText, `{"content":`+adapters.JSONString(f)+after+`}`)
			}
		case adapters.KindRefusal:
			for _, f := range frags[i] {
				delta(adapters.PhaseText, `{"refusal":`+adapters.JSONString(f)+`}`)
			}
		case adapters.KindToolCall:
			if i > 0 || p.deepseek {
				delta(adapters.PhaseStart, `{"tool_calls":[`+callStart(it)+`]}`)
			}
			for _, f := range frags[i] {
				delta(adapters.PhaseArgs, `{"tool_calls":[`+callArgs(it.index, f)+`]}`)
			}
		}
	}

	// The finish chunk decides the stop: with [DONE] it is the terminal
	// (without it a client has no finish_reason at all).
	finish := adapters.JSONString(st.finish)
	if p.deepseek {
		emit(adapters.PhaseTerminal, c.chunk(`{"content":""}`, finish, st.usage))
	} else {
		emit(adapters.PhaseTerminal, c.chunk(`{}`, finish, ""))
		if o.IncludeUsage {
			emit(adapters.PhaseUsage, c.usageChunk(st.usage))
		}
	}
	emit(adapters.PhaseTerminal, "[DONE]")
	return out
}
