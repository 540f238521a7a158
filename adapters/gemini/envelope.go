package gemini

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
)

// The Gemini API's wire objects (fields in the API's order), rendering a
// scripted turn as them, and the non-streaming body.

// ---- the wire objects, fields in the API's order ---------------------------

type simPart struct {
	Text             *string  `json:"text,omitempty"`
	Thought          bool     `json:"thought,omitempty"`
	FunctionCall     *simCall `json:"functionCall,omitempty"`
	ThoughtSignature string   `json:"thoughtSignature,omitempty"`
}

// simCall is a functionCall: name and args only (no id, see the top).
type simCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type simContent struct {
	Parts []simPart `json:"parts,omitempty"`
	Role  string    `json:"role"`
}

type simRating struct {
	Category    string `json:"category"`
	Probability string `json:"probability"`
	Blocked     bool   `json:"blocked,omitempty"`
}

type simCandidate struct {
	Content       *simContent `json:"content,omitempty"`
	FinishReason  string      `json:"finishReason,omitempty"`
	Index         int         `json:"index"`
	SafetyRatings []simRating `json:"safetyRatings,omitempty"`
}

type simModality struct {
	Modality   string `json:"modality"`
	TokenCount int64  `json:"tokenCount"`
}

// simUsage is usageMetadata; Google's JSON leaves out counters that are 0.
type simUsage struct {
	PromptTokenCount        int64         `json:"promptTokenCount,omitempty"`
	CandidatesTokenCount    int64         `json:"candidatesTokenCount,omitempty"`
	TotalTokenCount         int64         `json:"totalTokenCount,omitempty"`
	CachedContentTokenCount int64         `json:"cachedContentTokenCount,omitempty"`
	PromptTokensDetails     []simModality `json:"promptTokensDetails,omitempty"`
	CacheTokensDetails      []simModality `json:"cacheTokensDetails,omitempty"`
	ThoughtsTokenCount      int64         `json:"thoughtsTokenCount,omitempty"`
}

type simResponse struct {
	Candidates    []simCandidate `json:"candidates"`
	UsageMetadata *simUsage      `json:"usageMetadata,omitempty"`
	ModelVersion  string         `json:"modelVersion"`
	ResponseID    string         `json:"responseId"`
}

// simRatings are the safetyRatings of a blocked candidate (refusal.sse).
var simRatings = []simRating{
	{Category: "HARM_CATEGORY_DANGEROUS_CONTENT", Probability: "HIGH", Blocked: true},
	{Category: "HARM_CATEGORY_HARASSMENT", Probability: "NEGLIGIBLE"},
}

// simMarshal is compact JSON, UTF-8 and <>& left as they are.
func simMarshal(v any) []byte {
	b, _ := adapters.MarshalBody(v)
	return b
}

// simStreamJSON prints v in the one-line style of Google's stream chunks: a
// space after each colon, none after commas.
func simStreamJSON(v any) string {
	compact := simMarshal(v)
	var b strings.Builder
	b.Grow(len(compact) + len(compact)/8)
	in, esc := false, false
	for _, c := range compact {
		b.WriteByte(c)
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case !in && c == ':':
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// simPrettyJSON prints v as Google's bodies are: two-space indentation.
func simPrettyJSON(v any) []byte {
	compact := simMarshal(v)
	b, _ := wire.AppendIndent(nil, string(compact))
	return append(b, '\n')
}

// ---- rendering a turn -----------------------------------------------------

type simItem struct {
	kind adapters.ItemKind // reasoning, message or tool_call
	text string            // text, or the call's args (a JSON object)
	name string
}

type simTurn struct {
	model, id string
	items     []simItem
	finish    string
	hasCalls  bool
	thought   bool   // the turn has reasoning
	signature string // thoughtSignature of the turn
	prompt    int64
	cached    int64
	cands     int64
	thoughts  int64
}

// simFinish is the finishReason for a canonical stop.
func simFinish(s adapters.StopReason) string {
	switch s {
	case adapters.StopTruncated:
		return "MAX_TOKENS"
	case adapters.StopRefusal:
		return "SAFETY"
	}
	return "STOP" // final, tool_call, stop_sequence
}

// simArgs is a call's args as Gemini sends them: a JSON object, compact.
// Anything else (a cut or malformed argument text) cannot be sent: Gemini
// streams no partial calls.
func simArgs(args json.RawMessage) (string, bool) {
	if len(bytes.TrimSpace(args)) == 0 {
		return "{}", true
	}
	text := adapters.ArgumentText(args)
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(text), &m) != nil || m == nil {
		return "", false
	}
	var b bytes.Buffer
	if json.Compact(&b, []byte(text)) != nil {
		return "", false
	}
	return b.String(), true
}

func simRender(t adapters.ModelTurn, o adapters.ResponseOptions) simTurn {
	st := simTurn{model: strings.TrimPrefix(o.Model, "models/"), id: Protocol{}.ResponseID(o), finish: simFinish(t.Stop), signature: simSignature(o.Seed)}
	if st.model == "" {
		st.model = simDefaultModel
	}
	outChars := 0
	for _, it := range t.Items {
		switch it.Kind {
		case adapters.KindReasoning:
			if it.Text == "" {
				continue
			}
			st.thought = true
			st.items = append(st.items, simItem{kind: it.Kind, text: it.Text})
		case adapters.KindMessage:
			if it.Text == "" {
				continue
			}
			st.items = append(st.items, simItem{kind: it.Kind, text: it.Text})
		case adapters.KindToolCall:
			args, ok := simArgs(it.Arguments)
			if !ok {
				continue
			}
			st.hasCalls = true
			st.items = append(st.items, simItem{kind: it.Kind, text: args, name: it.Name})
		default:
			// A refusal is the finishReason: Gemini has no refusal part.
			continue
		}
		outChars += utf8.RuneCountInString(st.items[len(st.items)-1].text)
	}
	c := wire.UsageCounts(t.Usage, outChars)
	st.prompt, st.cached, st.thoughts = c.Input, c.CacheRead, c.Reasoning
	// A given output count includes the thoughts; an estimate is of the
	// candidates alone.
	st.cands = c.Output
	if c.OutputGiven {
		st.cands = max(0, c.Output-st.thoughts)
	}
	return st
}

// usage is usageMetadata: the prompt counts on every chunk, the output
// counts on the last (final).
func (st simTurn) usage(final bool) *simUsage {
	u := &simUsage{PromptTokenCount: st.prompt, TotalTokenCount: st.prompt, CachedContentTokenCount: st.cached}
	if st.prompt > 0 {
		u.PromptTokensDetails = []simModality{{Modality: "TEXT", TokenCount: st.prompt}}
	}
	if st.cached > 0 {
		u.CacheTokensDetails = []simModality{{Modality: "TEXT", TokenCount: st.cached}}
	}
	if final {
		u.CandidatesTokenCount, u.ThoughtsTokenCount = st.cands, st.thoughts
		u.TotalTokenCount = st.prompt + st.cands + st.thoughts
	}
	return u
}

func (st simTurn) response(c simCandidate, final bool) simResponse {
	return simResponse{Candidates: []simCandidate{c}, UsageMetadata: st.usage(final), ModelVersion: st.model, ResponseID: st.id}
}

func simText(s string) *string { return &s }

// callPart is a functionCall part; the turn's first carries the thought
// signature (signed says whether one has).
func (st simTurn) callPart(it simItem, signed *bool) simPart {
	p := simPart{FunctionCall: &simCall{Name: it.name, Args: json.RawMessage(it.text)}}
	if !*signed {
		p.ThoughtSignature, *signed = st.signature, true
	}
	return p
}

// Body renders a turn as the generateContent body: the same response id,
// parts and signature as StreamEvents for the same seed, one part per item.
func (Protocol) Body(t adapters.ModelTurn, o adapters.ResponseOptions) []byte {
	st := simRender(t, o)
	var parts []simPart
	answer := -1 // the first text part: it carries the signature of a text turn
	signed := false
	for _, it := range st.items {
		switch it.kind {
		case adapters.KindToolCall:
			parts = append(parts, st.callPart(it, &signed))
		case adapters.KindReasoning:
			parts = append(parts, simPart{Text: simText(it.text), Thought: true})
		default:
			if answer < 0 {
				answer = len(parts)
			}
			parts = append(parts, simPart{Text: simText(it.text)})
		}
	}
	if st.thought && !st.hasCalls && answer >= 0 && st.finish != "SAFETY" {
		parts[answer].ThoughtSignature = st.signature
	}
	c := simCandidate{FinishReason: st.finish}
	if len(parts) > 0 || st.finish != "SAFETY" {
		c.Content = &simContent{Parts: parts, Role: "model"}
	}
	if st.finish == "SAFETY" {
		c.SafetyRatings = simRatings
	}
	return simPrettyJSON(st.response(c, true))
}
