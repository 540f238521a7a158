package openaichat

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
)

// Rendering a scripted turn (adapters.ModelTurn) as Chat Completions'
// objects: the pieces both the stream and the non-streaming body are made of,
// and the body itself.

// ---- rendering a turn -----------------------------------------------------

// simItem is one output item as the wire carries it.
type simItem struct {
	kind   adapters.ItemKind // message (content), reasoning, tool_call, refusal
	text   string            // text, or the exact argument text
	callID string
	name   string
	index  int // tool_calls[].index
}

type simTurn struct {
	id, model string
	created   int64
	items     []simItem
	thinks    bool   // DeepSeek: the turn has reasoning_content
	finish    string // finish_reason
	usage     string // the usage object, compact JSON
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }

// finishReason is the finish_reason for a canonical stop. A refusal is
// stop after refusal text at OpenAI, content_filter where there is none.
func (p protocol) finishReason(s adapters.StopReason, refusalText bool) string {
	switch s {
	case adapters.StopToolCall:
		return "tool_calls"
	case adapters.StopTruncated:
		return "length"
	case adapters.StopRefusal:
		if refusalText && !p.deepseek {
			return "stop"
		}
		return "content_filter"
	}
	return "stop"
}

func (p protocol) render(t adapters.ModelTurn, o adapters.ResponseOptions) simTurn {
	st := simTurn{id: p.ResponseID(o), model: o.Model, created: o.Created}
	if st.created == 0 { // no clock given: follow the seed
		st.created = simEpoch + int64(o.Seed%(1<<32))
	}
	if st.model == "" {
		st.model = defaultOpenAIModel
		if p.deepseek {
			st.model = defaultDeepSeekModel
		}
	}
	refusalText := false
	calls, outChars := 0, 0
	for _, it := range t.Items {
		item := simItem{kind: it.Kind, text: it.Text}
		switch it.Kind {
		case adapters.KindReasoning:
			outChars += utf8.RuneCountInString(it.Text)
			if !p.deepseek || it.Text == "" {
				continue // Chat Completions has no reasoning text
			}
			st.thinks = true
		case adapters.KindToolCall:
			item.callID, item.name, item.index = it.CallID, it.Name, calls
			if item.callID == "" {
				item.callID = p.callID(o.Seed, calls)
			}
			calls++
			if item.text = adapters.ArgumentText(it.Arguments); item.text == "" {
				item.text = "{}"
			}
		case adapters.KindRefusal:
			if p.deepseek {
				item.kind = adapters.KindMessage // DeepSeek has no refusal field
			} else if it.Text != "" {
				refusalText = true
			}
		case adapters.KindMessage:
		default:
			continue
		}
		outChars += utf8.RuneCountInString(item.text)
		st.items = append(st.items, item)
	}
	st.finish = p.finishReason(t.Stop, refusalText)
	st.usage = p.usage(t.Usage, outChars)
	return st
}

// usage is the usage object (protocols.md §2.5, §5): prompt_tokens counts
// every token read (the script's input), cached ones included;
// completion_tokens includes the reasoning tokens.
func (p protocol) usage(u adapters.Usage, outChars int) string {
	c := wire.UsageCounts(u, outChars)
	in, out, cached, reasoning := c.Input, c.Output, c.CacheRead, c.Reasoning
	total := i64(in + out)
	if p.deepseek {
		return `{"prompt_tokens":` + i64(in) + `,"completion_tokens":` + i64(out) + `,"total_tokens":` + total +
			`,"prompt_tokens_details":{"cached_tokens":` + i64(cached) + `},"completion_tokens_details":{"reasoning_tokens":` + i64(reasoning) +
			`},"prompt_cache_hit_tokens":` + i64(cached) + `,"prompt_cache_miss_tokens":` + i64(max(0, in-cached)) + `}`
	}
	details := `{"cached_tokens":` + i64(cached) + `,"audio_tokens":0`
	if u.CacheWriteTokens != nil {
		details += `,"cache_write_tokens":` + i64(c.CacheWrite)
	}
	return `{"prompt_tokens":` + i64(in) + `,"completion_tokens":` + i64(out) + `,"total_tokens":` + total +
		`,"prompt_tokens_details":` + details + `},"completion_tokens_details":{"reasoning_tokens":` + i64(reasoning) +
		`,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}`
}

// The non-streaming body, keys in the API's order.
type simCompletion struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	Choices           []simChoice     `json:"choices"`
	Usage             json.RawMessage `json:"usage"`
	ServiceTier       string          `json:"service_tier,omitempty"`
	SystemFingerprint string          `json:"system_fingerprint"`
}

type simChoice struct {
	Index        int             `json:"index"`
	Message      simMessageOut   `json:"message"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
}

type simMessageOut struct {
	Role             string          `json:"role"`
	Content          *string         `json:"content"`
	ReasoningContent *string         `json:"reasoning_content,omitempty"` // DeepSeek
	Refusal          json.RawMessage `json:"refusal,omitempty"`           // OpenAI: null or the text
	Annotations      json.RawMessage `json:"annotations,omitempty"`       // OpenAI: []
	ToolCalls        []simCallOut    `json:"tool_calls,omitempty"`
}

type simCallOut struct {
	Index    *int   `json:"index,omitempty"` // DeepSeek
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Body renders a turn as the chat.completion object: the same id, created,
// call ids and usage as StreamEvents for the same seed.
func (p protocol) Body(t adapters.ModelTurn, o adapters.ResponseOptions) []byte {
	st := p.render(t, o)
	var text, reasoning, refusal strings.Builder
	hasText, hasRefusal := false, false
	m := simMessageOut{Role: "assistant"}
	for _, it := range st.items {
		switch it.kind {
		case adapters.KindReasoning:
			reasoning.WriteString(it.text)
		case adapters.KindMessage:
			hasText = true
			text.WriteString(it.text)
		case adapters.KindRefusal:
			hasRefusal = true
			refusal.WriteString(it.text)
		case adapters.KindToolCall:
			c := simCallOut{ID: it.callID, Type: "function"}
			c.Function.Name, c.Function.Arguments = it.name, it.text
			if p.deepseek {
				c.Index = &it.index
			}
			m.ToolCalls = append(m.ToolCalls, c)
		}
	}
	content := text.String()
	if hasText || p.deepseek {
		m.Content = &content // DeepSeek sends "" beside tool calls; OpenAI null
	}
	if st.thinks {
		r := reasoning.String()
		m.ReasoningContent = &r
	}
	if !p.deepseek {
		m.Refusal, m.Annotations = json.RawMessage("null"), json.RawMessage("[]")
		if hasRefusal {
			m.Refusal = json.RawMessage(adapters.JSONString(refusal.String()))
		}
	}
	body := simCompletion{ID: st.id, Object: "chat.completion", Created: st.created, Model: st.model,
		Choices: []simChoice{{Message: m, Logprobs: json.RawMessage("null"), FinishReason: st.finish}},
		Usage:   json.RawMessage(st.usage), SystemFingerprint: openAIFingerprint}
	if p.deepseek {
		body.SystemFingerprint = deepSeekFingerprint
	} else {
		body.ServiceTier = "default"
	}
	compact, _ := adapters.MarshalBody(body)
	out, ok := wire.AppendIndent(o.Buf[:0], adapters.View(compact))
	if ok {
		out = append(out, '\n') // the trailing newline the body has always had
	}
	return out
}
