package diff

// Turns compared: tool calls and their results, responses, usage,
// latency, the final output and the validation layers.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/jsonschema"
	"github.com/modelwire/modelwire/store"
)

// callChanges compares the tool calls a turn proposed and their results,
// matched by call_id.
func callChanges(turn int, x, y store.TurnRecord, rename map[string]string, fedBack map[string]bool) []Change {
	var out []Change
	ca, cb := callsOf(x), callsOf(y)
	for id, c := range cb {
		if a, ok := rename[id]; ok {
			delete(cb, id)
			c.CallID = a
			cb[a] = c
		}
	}
	ids := make([]string, 0, len(ca)+len(cb))
	for _, c := range x.Calls {
		ids = append(ids, c.CallID)
	}
	for _, c := range y.Calls {
		id := c.CallID
		if a, ok := rename[id]; ok {
			id = a
		}
		if _, ok := ca[id]; !ok {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		p := "turns/" + strconv.Itoa(turn) + "/calls/" + id
		a, inA := ca[id]
		b, inB := cb[id]
		switch {
		case !inA:
			out = append(out, Change{Kind: KindToolCall, Turn: turn, CallID: id, Path: p, Op: OpAdded, B: callBrief(b)})
			continue
		case !inB:
			out = append(out, Change{Kind: KindToolCall, Turn: turn, CallID: id, Path: p, Op: OpRemoved, A: callBrief(a)})
			continue
		}
		if a.Name != b.Name {
			out = append(out, Change{Kind: KindToolCall, Turn: turn, CallID: id, Path: p + "/name", Op: OpChanged, A: a.Name, B: b.Name})
		}
		for _, c := range Values(p+"/arguments", raw(a.Arguments), raw(b.Arguments), nil) {
			c.Kind, c.Turn, c.CallID = KindToolCall, turn, id
			out = append(out, c)
		}
		if a.Decision != b.Decision && !fedBack[a.CallID] && !fedBack[b.CallID] {
			out = append(out, Change{Kind: KindToolCall, Turn: turn, CallID: id, Path: p + "/decision", Op: OpChanged, A: a.Decision, B: b.Decision})
		}
		for _, c := range Values(p+"/arguments_sent", raw(a.Edited), raw(b.Edited), nil) {
			c.Kind, c.Turn, c.CallID = KindToolCall, turn, id
			out = append(out, c)
		}
		rp := "turns/" + strconv.Itoa(turn) + "/results/" + id
		if a.HasResult != b.HasResult || a.IsError != b.IsError {
			out = append(out, Change{Kind: KindToolResult, Turn: turn, CallID: id, Path: rp + "/is_error", Op: OpChanged,
				A: resultState(a), B: resultState(b)})
		}
		for _, c := range Values(rp, a.Result, b.Result, nil) {
			c.Kind, c.Turn, c.CallID = KindToolResult, turn, id
			out = append(out, c)
		}
	}
	return out
}

func callsOf(t store.TurnRecord) map[string]store.Call {
	m := make(map[string]store.Call, len(t.Calls))
	for _, c := range t.Calls {
		m[c.CallID] = c
	}
	return m
}

func callBrief(c store.Call) map[string]any {
	return map[string]any{"name": c.Name, "arguments": raw(c.Arguments), "decision": c.Decision}
}

func resultState(c store.Call) string {
	switch {
	case !c.HasResult:
		return "none"
	case c.IsError:
		return "error"
	}
	return "ok"
}

// raw decodes stored JSON; nil for none, the text itself when it is not
// JSON.
func raw(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	v, err := jsonschema.ParseJSON(b)
	if err != nil {
		return string(b)
	}
	return v
}

// responseChanges compares how the turn's response ended, its text (the
// last turn's text is the final object, compared field by field instead)
// and its usage.
func responseChanges(turn int, x, y store.TurnRecord, final bool) []Change {
	p := "turns/" + strconv.Itoa(turn)
	var out []Change
	add := func(kind, path string, a, b any) {
		out = append(out, Change{Kind: kind, Turn: turn, Path: p + "/" + path, Op: OpChanged, A: a, B: b})
	}
	if x.Attempt.StatusCode != y.Attempt.StatusCode {
		add(KindResponse, "http_status", x.Attempt.StatusCode, y.Attempt.StatusCode)
	}
	sa, sb := x.Summary, y.Summary
	if sa.Terminal != sb.Terminal {
		add(KindResponse, "terminal", sa.Terminal, sb.Terminal)
	}
	if sa.StopReason != sb.StopReason {
		add(KindResponse, "stop_reason", sa.StopReason, sb.StopReason)
	}
	if !final && sa.Text != sb.Text {
		add(KindResponse, "text", sa.Text, sb.Text)
	}
	if sa.Reasoning != sb.Reasoning {
		add(KindResponse, "reasoning", sa.Reasoning, sb.Reasoning)
	}
	if ra, rb := deref(sa.Refusal), deref(sb.Refusal); ra != rb {
		add(KindResponse, "refusal", ra, rb)
	}
	ua, ub := usageOf(sa.Usage), usageOf(sb.Usage)
	for _, k := range []string{"input_tokens", "output_tokens", "reasoning_tokens", "cache_read_tokens", "cache_write_tokens"} {
		if ua[k] != ub[k] {
			add(KindUsage, "usage/"+k, ua[k], ub[k])
		}
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func usageOf(u *adapters.Usage) map[string]any {
	m := map[string]any{}
	if u == nil {
		return m
	}
	for k, p := range map[string]*int64{"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens,
		"reasoning_tokens": u.ReasoningTokens, "cache_read_tokens": u.CacheReadTokens, "cache_write_tokens": u.CacheWriteTokens} {
		if p != nil {
			m[k] = *p
		}
	}
	return m
}

// latency is the turn's time to its terminal event in ms, to 0.1 ms.
func latency(t store.TurnRecord) any {
	if t.Attempt.Timings.Terminal == nil {
		return nil
	}
	return float64(t.Attempt.Timings.Terminal.Microseconds()/100) / 10
}

// Output is a session's final object: the last turn's text, as JSON when
// it is JSON.
func Output(turns []store.TurnRecord) any {
	if len(turns) == 0 {
		return nil
	}
	text := strings.TrimSpace(turns[len(turns)-1].Summary.Text)
	if text == "" {
		return nil
	}
	if v, err := jsonschema.ParseJSON([]byte(text)); err == nil {
		return v
	}
	return text
}

func outputChanges(a, b []store.TurnRecord) []Change {
	var out []Change
	for _, c := range Values("output", Output(a), Output(b), nil) {
		c.Kind = KindOutput
		out = append(out, c)
	}
	return out
}

func validationChanges(a, b []store.Validation) []Change {
	find := func(vs []store.Validation, layer string) (store.Validation, bool) {
		for _, v := range vs {
			if v.Layer == layer {
				return v, true
			}
		}
		return store.Validation{}, false
	}
	var layers []string
	for _, v := range append(append([]store.Validation{}, a...), b...) {
		if !slices.Contains(layers, v.Layer) {
			layers = append(layers, v.Layer)
		}
	}
	var out []Change
	for _, l := range layers {
		va, inA := find(a, l)
		vb, inB := find(b, l)
		p := "validation/" + l
		switch {
		case !inA:
			out = append(out, Change{Kind: KindValidation, Path: p, Op: OpAdded, B: vb.Status})
		case !inB:
			out = append(out, Change{Kind: KindValidation, Path: p, Op: OpRemoved, A: va.Status})
		default:
			if va.Status != vb.Status {
				out = append(out, Change{Kind: KindValidation, Path: p + "/status", Op: OpChanged, A: va.Status, B: vb.Status})
			}
			if va.Detail != vb.Detail {
				out = append(out, Change{Kind: KindValidation, Path: p + "/detail", Op: OpChanged, A: va.Detail, B: vb.Detail})
			}
		}
	}
	return out
}

// Text renders a value of a change for a person: JSON, compact (a JSON
// null is "null"; a side that has no value is its caller's to say).
func Text(v any) string {
	b, err := adapters.MarshalBody(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
