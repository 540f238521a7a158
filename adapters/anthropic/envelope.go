package anthropic

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
)

// Rendering a scripted turn as the Messages API's objects: content blocks,
// usage, the Message, and the non-streaming body.

// ---- rendering a turn -----------------------------------------------------

type simBlock struct {
	kind      adapters.ItemKind // message (text), reasoning (thinking), tool_call (tool_use)
	text      string            // text, thinking, or the exact argument text
	id, name  string
	signature string
}

type simTurn struct {
	model, id   string
	blocks      []simBlock
	stopReason  string
	stopDetails string // raw JSON
	in, cacheW  int64  // input_tokens (without cache), cache_creation_input_tokens
	cacheR, out int64
	thinking    *int64 // output_tokens_details.thinking_tokens
}

// stopReasonFor is the API's stop_reason for a canonical stop.
func stopReasonFor(s adapters.StopReason) string {
	switch s {
	case adapters.StopToolCall:
		return "tool_use"
	case adapters.StopTruncated:
		return "max_tokens"
	case adapters.StopRefusal:
		return "refusal"
	case adapters.StopPause:
		return "pause_turn"
	case adapters.StopStopSequence:
		return "stop_sequence"
	}
	return "end_turn"
}

func render(t adapters.ModelTurn, o adapters.ResponseOptions) simTurn {
	st := simTurn{model: o.Model, id: protocol{}.ResponseID(o), stopReason: stopReasonFor(t.Stop), stopDetails: "null"}
	if st.model == "" {
		st.model = defaultSimModel
	}
	if t.Stop == adapters.StopRefusal {
		// No named policy category for a scripted refusal: both null, as
		// the SDK documents for such refusals.
		st.stopDetails = `{"type":"refusal","category":null,"explanation":null}`
	}
	calls := uint64(0)
	var outChars int
	for _, it := range t.Items {
		b := simBlock{kind: it.Kind, text: it.Text}
		switch it.Kind {
		case adapters.KindReasoning:
			b.signature = it.Signature
			if b.signature == "" || strings.HasPrefix(b.signature, RedactedPrefix) {
				b.signature = signature(o.Seed, len(st.blocks))
			}
		case adapters.KindToolCall:
			b.id, b.name = it.CallID, it.Name
			if b.id == "" {
				b.id = simID("toolu_01", o.Seed, saltTool+calls<<16)
			}
			calls++
			b.text = adapters.ArgumentText(it.Arguments)
		case adapters.KindMessage, adapters.KindRefusal:
			// Anthropic has no refusal block: a refusal is text, and the
			// stop_reason says it (protocols.md §3.3).
			b.kind = adapters.KindMessage
			if b.text == "" {
				continue
			}
		default:
			continue
		}
		outChars += utf8.RuneCountInString(b.text)
		st.blocks = append(st.blocks, b)
	}
	c := wire.UsageCounts(t.Usage, outChars)
	st.cacheR, st.cacheW = c.CacheRead, c.CacheWrite
	// Anthropic's input_tokens excludes both cache counts (§3.3); the
	// script's input is every token read.
	st.in = max(0, c.Input-st.cacheR-st.cacheW)
	st.out = c.Output
	if t.Usage.ReasoningTokens != nil {
		st.thinking = &c.Reasoning
	}
	return st
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }

func (st simTurn) cacheCreation() string {
	return `{"ephemeral_5m_input_tokens":` + i64(st.cacheW) + `,"ephemeral_1h_input_tokens":0}`
}

// usage is the Usage object of message_start (output 1) and of the body
// (final counts).
func (st simTurn) usage(start bool) string {
	out := st.out
	if start {
		out = 1
	}
	s := `{"input_tokens":` + i64(st.in) + `,"cache_creation_input_tokens":` + i64(st.cacheW) +
		`,"cache_read_input_tokens":` + i64(st.cacheR) + `,"cache_creation":` + st.cacheCreation() +
		`,"output_tokens":` + i64(out)
	if !start && st.thinking != nil {
		s += `,"output_tokens_details":{"thinking_tokens":` + i64(*st.thinking) + `}`
	}
	return s + `,"service_tier":"standard","inference_geo":"not_available"}`
}

// deltaUsage is message_delta's cumulative usage.
func (st simTurn) deltaUsage() string {
	s := `{"input_tokens":` + i64(st.in) + `,"cache_creation_input_tokens":` + i64(st.cacheW) +
		`,"cache_read_input_tokens":` + i64(st.cacheR) + `,"output_tokens":` + i64(st.out)
	if st.thinking != nil {
		s += `,"output_tokens_details":{"thinking_tokens":` + i64(*st.thinking) + `}`
	}
	return s + "}"
}

// message is the Message object; content is raw JSON.
func (st simTurn) message(content, stopReason, stopDetails, usage string) string {
	return `{"model":` + adapters.JSONString(st.model) + `,"id":` + adapters.JSONString(st.id) +
		`,"type":"message","role":"assistant","content":` + content +
		`,"stop_reason":` + stopReason + `,"stop_sequence":null,"stop_details":` + stopDetails +
		`,"usage":` + usage + `}`
}

// Body renders a turn as the API's Message object: the same id, blocks and
// call ids as StreamEvents for the same seed.
func (protocol) Body(t adapters.ModelTurn, o adapters.ResponseOptions) []byte {
	st := render(t, o)
	var c strings.Builder
	c.WriteByte('[')
	for i, b := range st.blocks {
		if i > 0 {
			c.WriteByte(',')
		}
		switch b.kind {
		case adapters.KindReasoning:
			c.WriteString(`{"type":"thinking","thinking":` + adapters.JSONString(b.text) + `,"signature":` + adapters.JSONString(b.signature) + `}`)
		case adapters.KindToolCall:
			c.WriteString(`{"type":"tool_use","id":` + adapters.JSONString(b.id) + `,"name":` + adapters.JSONString(b.name) + `,"input":` + bodyInput(b.text) + `}`)
		default:
			c.WriteString(`{"type":"text","text":` + adapters.JSONString(b.text) + `}`)
		}
	}
	c.WriteByte(']')
	return []byte(st.message(c.String(), adapters.JSONString(st.stopReason), st.stopDetails, st.usage(false)))
}

// bodyInput is a tool_use block's input: the arguments when they are a JSON
// object (compacted), else {} — a body cannot carry a cut argument text.
func bodyInput(args string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &m) != nil || m == nil {
		return "{}"
	}
	raw, err := adapters.MarshalBody(json.RawMessage(args))
	if err != nil {
		return "{}"
	}
	return string(raw)
}
