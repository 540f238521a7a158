package openairesponses

// This file writes the streaming captures in testdata (go test -run
// TestGenerateCaptures -gen). It is kept so that every byte of a capture
// can be traced to the shape it follows: event order and fields from
// protocols.md §1.3–1.5 (openai-go v3.98.0 responses/response.go types,
// the OpenAPI examples), compact JSON with raw UTF-8 as the API sends it,
// sequence_number from 0 up, `obfuscation` on delta events. The captures
// are checked in; the tests read the files, never this generator.

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelwire/modelwire/adapters/adapterstest"
)

var gen = flag.Bool("gen", false, "rewrite the generated captures in testdata")

// raw is JSON text inserted as is.
type raw string

// obj builds a JSON object with its members in the given order.
func obj(kv ...any) raw {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv[i].(string))
		b.Write(k)
		b.WriteByte(':')
		b.WriteString(string(val(kv[i+1])))
	}
	b.WriteByte('}')
	return raw(b.String())
}

func arr(vs ...raw) raw {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return raw("[" + strings.Join(s, ",") + "]")
}

func val(v any) raw {
	if r, ok := v.(raw); ok {
		return r
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return raw(strings.TrimSuffix(b.String(), "\n"))
}

// sseWriter writes one capture: `event: <type>` and one `data:` line per
// event, the JSON type first and sequence_number second.
type sseWriter struct {
	b   strings.Builder
	seq int
	obf int
}

func newSSE(sources ...string) *sseWriter {
	w := &sseWriter{}
	for _, s := range sources {
		fmt.Fprintf(&w.b, ": source: %s\n", s)
	}
	w.b.WriteString("\n")
	return w
}

func (w *sseWriter) ev(typ string, kv ...any) {
	all := append([]any{"type", typ, "sequence_number", w.seq}, kv...)
	fmt.Fprintf(&w.b, "event: %s\ndata: %s\n\n", typ, obj(all...))
	w.seq++
}

// obfuscation is the random padding of delta events, deterministic here.
func (w *sseWriter) obfuscation() string {
	const letters = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ0123456789"
	w.obf++
	n := 3 + w.obf%9
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteByte(letters[(w.obf*7+i*13)%len(letters)])
	}
	return b.String()
}

// split cuts s into pieces of 1–4 characters (never inside a UTF-8
// character), like token-sized deltas.
func split(s string) []string {
	var out []string
	sizes := []int{2, 1, 3, 4, 2, 3, 1, 4}
	for i := 0; s != ""; i++ {
		n := sizes[i%len(sizes)]
		cut := 0
		for j := 0; j < n && cut < len(s); j++ {
			_, size := utf8.DecodeRuneInString(s[cut:])
			cut += size
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}

const (
	genModel   = "gpt-5-mini-2025-08-07"
	genCreated = 1764514800
)

// respOpts are the Response members that differ between captures.
type respOpts struct {
	id, status string
	output     raw // "[]" while in progress
	usage      raw // "null" while in progress
	err        raw // "null" unless failed
	incomplete raw // "null" unless incomplete
	tools      raw
	format     raw
	reasoning  raw
}

func response(o respOpts) raw {
	for _, p := range []*raw{&o.output, &o.usage, &o.err, &o.incomplete, &o.tools, &o.format, &o.reasoning} {
		if *p == "" {
			*p = "null"
		}
	}
	if o.output == "null" {
		o.output = "[]"
	}
	if o.tools == "null" {
		o.tools = "[]"
	}
	if o.format == "null" {
		o.format = obj("type", "text")
	}
	if o.reasoning == "null" {
		o.reasoning = obj("effort", nil, "summary", nil)
	}
	completedAt := any(nil)
	if o.status == "completed" {
		completedAt = genCreated + 3
	}
	return obj("id", o.id, "object", "response", "created_at", genCreated, "status", o.status,
		"background", false, "completed_at", completedAt, "error", o.err, "incomplete_details", o.incomplete,
		"instructions", nil, "max_output_tokens", 2048, "max_tool_calls", nil, "model", genModel,
		"output", o.output, "parallel_tool_calls", true, "previous_response_id", nil,
		"prompt_cache_key", nil, "reasoning", o.reasoning, "safety_identifier", nil,
		"service_tier", "default", "store", true, "temperature", 1.0,
		"text", obj("format", o.format, "verbosity", "medium"), "tool_choice", "auto", "tools", o.tools,
		"top_logprobs", 0, "top_p", 1.0, "truncation", "disabled", "usage", o.usage, "user", nil, "metadata", obj())
}

func usage(in, cached, cacheWrite, out, reasoning int) raw {
	return obj("input_tokens", in, "input_tokens_details", obj("cache_write_tokens", cacheWrite, "cached_tokens", cached),
		"output_tokens", out, "output_tokens_details", obj("reasoning_tokens", reasoning), "total_tokens", in+out)
}

// compact is JSON text on one line (samples/refund.json holds the schemas
// indented; an SSE data line cannot).
func compact(j []byte) raw {
	var b bytes.Buffer
	if err := json.Compact(&b, j); err != nil {
		panic(err)
	}
	return raw(b.String())
}

func refundToolsJSON() raw {
	var ts []raw
	for _, t := range adapterstest.RefundTools() {
		ts = append(ts, obj("type", "function", "description", t.Description, "name", t.Name,
			"parameters", compact(t.Parameters), "strict", t.Strict))
	}
	return arr(ts...)
}

func refundFormat() raw {
	return obj("type", "json_schema", "description", nil, "name", "refund_assessment",
		"schema", compact(adapterstest.RefundSchema()), "strict", true)
}

// item shapes
func fcItem(id, status, args, callID, name string) raw {
	return obj("id", id, "type", "function_call", "status", status, "arguments", args, "call_id", callID, "name", name)
}

func msgItem(id, status string, content raw) raw {
	return obj("id", id, "type", "message", "status", status, "content", content, "role", "assistant")
}

func textPart(text string) raw {
	return obj("type", "output_text", "annotations", arr(), "logprobs", arr(), "text", text)
}

func refusalPartJSON(text string) raw { return obj("type", "refusal", "refusal", text) }

func rsItem(id string, summary []string, encrypted string) raw {
	var parts []raw
	for _, s := range summary {
		parts = append(parts, obj("type", "summary_text", "text", s))
	}
	if encrypted == "" {
		return obj("id", id, "type", "reasoning", "summary", arr(parts...))
	}
	return obj("id", id, "type", "reasoning", "encrypted_content", encrypted, "summary", arr(parts...))
}

// stream fragments

func (w *sseWriter) start(o respOpts) {
	o.status = "in_progress"
	w.ev("response.created", "response", response(o))
	w.ev("response.in_progress", "response", response(o))
}

func (w *sseWriter) reasoning(idx int, id string, summary []string, encrypted string) raw {
	w.ev("response.output_item.added", "output_index", idx, "item", rsItem(id, nil, ""))
	for si, s := range summary {
		w.ev("response.reasoning_summary_part.added", "item_id", id, "output_index", idx, "summary_index", si,
			"part", obj("type", "summary_text", "text", ""))
		for _, d := range split(s) {
			w.ev("response.reasoning_summary_text.delta", "item_id", id, "output_index", idx, "summary_index", si,
				"delta", d, "obfuscation", w.obfuscation())
		}
		w.ev("response.reasoning_summary_text.done", "item_id", id, "output_index", idx, "summary_index", si, "text", s)
		w.ev("response.reasoning_summary_part.done", "item_id", id, "output_index", idx, "summary_index", si,
			"part", obj("type", "summary_text", "text", s))
	}
	done := rsItem(id, summary, encrypted)
	w.ev("response.output_item.done", "output_index", idx, "item", done)
	return done
}

func (w *sseWriter) call(idx int, id, callID, name, args string) raw {
	w.ev("response.output_item.added", "output_index", idx, "item", fcItem(id, "in_progress", "", callID, name))
	for _, d := range split(args) {
		w.ev("response.function_call_arguments.delta", "item_id", id, "output_index", idx, "delta", d,
			"obfuscation", w.obfuscation())
	}
	w.ev("response.function_call_arguments.done", "item_id", id, "output_index", idx, "name", name, "arguments", args)
	done := fcItem(id, "completed", args, callID, name)
	w.ev("response.output_item.done", "output_index", idx, "item", done)
	return done
}

// text streams a message whose text is cut by split; upTo < 0 sends it
// all and closes it, otherwise only upTo deltas are sent and the item is
// closed as incomplete.
func (w *sseWriter) text(idx int, id, text string, upTo int) raw {
	w.ev("response.output_item.added", "output_index", idx, "item", msgItem(id, "in_progress", arr()))
	w.ev("response.content_part.added", "item_id", id, "output_index", idx, "content_index", 0,
		"part", textPart(""))
	pieces := split(text)
	status := "completed"
	if upTo >= 0 {
		pieces, status = pieces[:upTo], "incomplete"
		text = strings.Join(pieces, "")
	}
	for _, d := range pieces {
		w.ev("response.output_text.delta", "item_id", id, "output_index", idx, "content_index", 0,
			"delta", d, "logprobs", arr(), "obfuscation", w.obfuscation())
	}
	w.ev("response.output_text.done", "item_id", id, "output_index", idx, "content_index", 0,
		"text", text, "logprobs", arr())
	w.ev("response.content_part.done", "item_id", id, "output_index", idx, "content_index", 0,
		"part", textPart(text))
	done := msgItem(id, status, arr(textPart(text)))
	w.ev("response.output_item.done", "output_index", idx, "item", done)
	return done
}

func (w *sseWriter) refusal(idx int, id, text string) raw {
	w.ev("response.output_item.added", "output_index", idx, "item", msgItem(id, "in_progress", arr()))
	w.ev("response.content_part.added", "item_id", id, "output_index", idx, "content_index", 0,
		"part", refusalPartJSON(""))
	for _, d := range split(text) {
		w.ev("response.refusal.delta", "item_id", id, "output_index", idx, "content_index", 0, "delta", d)
	}
	w.ev("response.refusal.done", "item_id", id, "output_index", idx, "content_index", 0, "refusal", text)
	w.ev("response.content_part.done", "item_id", id, "output_index", idx, "content_index", 0,
		"part", refusalPartJSON(text))
	done := msgItem(id, "completed", arr(refusalPartJSON(text)))
	w.ev("response.output_item.done", "output_index", idx, "item", done)
	return done
}

// Ids of the refund captures (resp_…, rs_…, fc_…, call_…, msg_…).
var refundIDs = struct {
	resp          [4]string
	rs            string
	encrypted     string
	fc, call      [4]string // turn1 [0], turn2 [1] [2]
	msg           string
	reasoningText string
}{
	resp:          [4]string{"", "resp_68f0a1c2d3e48190b5a6c7d8e9f00101", "resp_68f0a1c7a1b28190a4c3d2e1f0a90202", "resp_68f0a1ce0f1e8190b2c4d6e8fa1c0303"},
	rs:            "rs_68f0a1c31a2b8190a0b1c2d3e4f50101",
	encrypted:     "gAAAAABo8KHDZ3Jlc3VsdC1zdGF0ZS1vcGFxdWUtYmxvYi1mb3ItcmVwbGF5LXR1cm4tMQ==",
	fc:            [4]string{"fc_68f0a1c45b6c8190b7d8e9f0a1b20101", "fc_68f0a1c8c9d08190a1b2c3d4e5f60201", "fc_68f0a1c9e1f28190b3c4d5e6f7a80202"},
	call:          [4]string{"call_Q7mJ2xZp8KcN4vRt1sWy6bLd", "call_H3nV9tY2qLw5XcB8rKd1ZpFs", "call_M6pT4wJ8vN2cR5yQ1xKb9LhD"},
	msg:           "msg_68f0a1cf2a3b8190b4c5d6e7f8a90303",
	reasoningText: "**核查顺序**\n\n先按技能要求查询订单行 O-2048 / L1 的实付金额与售后政策编号。",
}

// RefundIDs is how the refund captures name their ids, for
// adapterstest.RefundRequest.
func refundRequestIDs() adapterstest.IDs {
	return adapterstest.IDs{
		Item:     func(turn, i int) string { return refundIDs.fc[callIndex(turn, i)] },
		Call:     func(turn, i int) string { return refundIDs.call[callIndex(turn, i)] },
		Response: func(turn int) string { return refundIDs.resp[turn] },
	}
}

func callIndex(turn, i int) int {
	if turn == 1 {
		return 0
	}
	return 1 + i
}

const srcSSE = "protocols.md §1.4 event order and fields (openai-go v3.98.0 responses/response.go: ResponseStreamEventUnion variants, Response, ResponseUsage)"

func genCaptures() map[string]string {
	out := map[string]string{}
	refundBase := respOpts{tools: refundToolsJSON(), format: refundFormat(), reasoning: obj("effort", "low", "summary", "auto")}

	// Refund turn 1: a reasoning item, then one call.
	{
		o := refundBase
		o.id = refundIDs.resp[1]
		w := newSSE(srcSSE, "refund case turn 1: reasoning item (summary + encrypted_content), then get_order_line (fixture order of openai-responses/turn1.sse)")
		w.start(o)
		rs := w.reasoning(0, refundIDs.rs, []string{refundIDs.reasoningText}, refundIDs.encrypted)
		fc := w.call(1, refundIDs.fc[0], refundIDs.call[0], "get_order_line", adapterstest.CaptureTurn1[0].Arguments)
		o.status, o.output, o.usage = "completed", arr(rs, fc), usage(1822, 0, 0, 87, 64)
		w.ev("response.completed", "response", response(o))
		out["refund_turn1.sse"] = w.b.String()
	}
	// Refund turn 2: two parallel calls, consecutive output indexes.
	{
		o := refundBase
		o.id = refundIDs.resp[2]
		w := newSSE(srcSSE, "refund case turn 2: parallel calls get_refund_ledger and get_refund_policy (consecutive output_index, protocols.md §1.4); usage with cache reads")
		w.start(o)
		a := w.call(0, refundIDs.fc[1], refundIDs.call[1], "get_refund_ledger", adapterstest.CaptureTurn2[0].Arguments)
		b := w.call(1, refundIDs.fc[2], refundIDs.call[2], "get_refund_policy", adapterstest.CaptureTurn2[1].Arguments)
		o.status, o.output, o.usage = "completed", arr(a, b), usage(2106, 1792, 0, 61, 0)
		w.ev("response.completed", "response", response(o))
		out["refund_turn2.sse"] = w.b.String()
	}
	// Refund turn 3: the final JSON answer as output_text.
	{
		o := refundBase
		o.id = refundIDs.resp[3]
		w := newSSE(srcSSE, "refund case turn 3: the refund_assessment JSON as one output_text part (content_part.added → output_text.delta… → output_text.done → content_part.done); usage with cache reads and writes")
		w.start(o)
		m := w.text(0, refundIDs.msg, adapterstest.CaptureModelText, -1)
		o.status, o.output, o.usage = "completed", arr(m), usage(2531, 2048, 384, 212, 0)
		w.ev("response.completed", "response", response(o))
		out["refund_turn3.sse"] = w.b.String()
	}
	// Plain text.
	{
		o := respOpts{id: "resp_0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e"}
		w := newSSE(srcSSE, "a plain text answer with logprobs and obfuscation on output_text.delta (protocols.md §1.1, §10.1 item 2)")
		w.start(o)
		m := w.text(0, "msg_0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d60", "Hello! 你好，这里是退款核查助手。", -1)
		o.status, o.output, o.usage = "completed", arr(m), usage(36, 0, 0, 14, 0)
		w.ev("response.completed", "response", response(o))
		out["text_only.sse"] = w.b.String()
	}
	// Reasoning with two summary parts, then text.
	{
		o := respOpts{id: "resp_1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f", reasoning: obj("effort", "medium", "summary", "detailed")}
		w := newSSE(srcSSE, "reasoning item with two summary parts and encrypted_content (protocols.md §1.3 reasoning, §1.4 reasoning events), then a message")
		w.start(o)
		rs := w.reasoning(0, "rs_1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e70", []string{"**Reading the ledger**\n\nPaid 18000, refunded 3000.", "**Cap**\n\n可退上限 = 18000 − 3000 − 2000 = 13000 分。"}, "gAAAAABo8KHDcmVhc29uaW5nLXN0YXRlLXR3by1wYXJ0cw==")
		m := w.text(1, "msg_1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e71", "最多可退 130 元。", -1)
		o.status, o.output, o.usage = "completed", arr(rs, m), usage(120, 0, 0, 310, 288)
		w.ev("response.completed", "response", response(o))
		out["reasoning.sse"] = w.b.String()
	}
	// Refusal content: status completed, only a refusal part.
	{
		o := respOpts{id: "resp_2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f70"}
		w := newSSE(srcSSE, "refusal content part: content_part.added(refusal) → refusal.delta… → refusal.done; status completed (protocols.md §1.5: a refusal is not a status)")
		w.start(o)
		m := w.refusal(0, "msg_2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f71", "抱歉，我不能直接执行退款操作。")
		o.status, o.output, o.usage = "completed", arr(m), usage(58, 0, 0, 12, 0)
		w.ev("response.completed", "response", response(o))
		out["refusal.sse"] = w.b.String()
	}
	// Truncated: max_output_tokens while writing text.
	{
		o := respOpts{id: "resp_3e4f5a6b7c8d9e0f1a2b3c4d5e6f7081", reasoning: obj("effort", "low", "summary", "auto")}
		w := newSSE(srcSSE, "response.incomplete with incomplete_details.reason max_output_tokens; the message item closes with status incomplete (protocols.md §1.5)")
		w.start(o)
		rs := w.reasoning(0, "rs_3e4f5a6b7c8d9e0f1a2b3c4d5e6f7082", nil, "gAAAAABo8KHDdHJ1bmNhdGVkLXJlYXNvbmluZw==")
		m := w.text(1, "msg_3e4f5a6b7c8d9e0f1a2b3c4d5e6f7083", adapterstest.CaptureModelText, 9)
		o.status, o.output, o.usage = "incomplete", arr(rs, m), usage(2400, 0, 0, 64, 48)
		o.incomplete = obj("reason", "max_output_tokens")
		w.ev("response.incomplete", "response", response(o))
		out["truncated.sse"] = w.b.String()
	}
	// Content filter.
	{
		o := respOpts{id: "resp_4f5a6b7c8d9e0f1a2b3c4d5e6f708192"}
		w := newSSE(srcSSE, "response.incomplete with incomplete_details.reason content_filter (protocols.md §1.3, §8.1: refused)")
		w.start(o)
		m := w.text(0, "msg_4f5a6b7c8d9e0f1a2b3c4d5e6f708193", "I can help with the refund check, but", 4)
		o.status, o.output, o.usage = "incomplete", arr(m), usage(40, 0, 0, 6, 0)
		o.incomplete = obj("reason", "content_filter")
		w.ev("response.incomplete", "response", response(o))
		out["content_filter.sse"] = w.b.String()
	}
	// response.failed.
	{
		o := respOpts{id: "resp_5a6b7c8d9e0f1a2b3c4d5e6f708192a3"}
		w := newSSE(srcSSE, "response.failed with response.error {code, message} (protocols.md §1.3 error codes, §1.5)")
		w.start(o)
		o.status, o.err = "failed", obj("code", "server_error", "message", "The server had an error while processing your request. Sorry about that!")
		w.ev("response.failed", "response", response(o))
		out["failed.sse"] = w.b.String()
	}
	// error event, documented flat shape.
	{
		o := respOpts{id: "resp_6b7c8d9e0f1a2b3c4d5e6f708192a3b4"}
		w := newSSE("protocols.md §1.4 `error` documented shape: code, message, param at top level (OAI-SPEC ResponseErrorEvent; openai-go ResponseErrorEvent)")
		w.start(o)
		w.ev("response.output_item.added", "output_index", 0, "item", msgItem("msg_6b7c8d9e0f1a2b3c4d5e6f708192a3b5", "in_progress", arr()))
		w.ev("response.content_part.added", "item_id", "msg_6b7c8d9e0f1a2b3c4d5e6f708192a3b5", "output_index", 0, "content_index", 0, "part", textPart(""))
		w.ev("response.output_text.delta", "item_id", "msg_6b7c8d9e0f1a2b3c4d5e6f708192a3b5", "output_index", 0, "content_index", 0, "delta", "您好，", "logprobs", arr(), "obfuscation", w.obfuscation())
		w.ev("error", "code", "server_error", "message", "The model produced invalid content.", "param", nil)
		out["error_flat.sse"] = w.b.String()
	}
	// error event, nested shape seen live.
	{
		w := newSSE("protocols.md §10.1 item 1: the nested `error` shape captured live (openai/openai-dotnet#881), before any output")
		w.ev("response.created", "response", response(respOpts{id: "resp_7c8d9e0f1a2b3c4d5e6f708192a3b4c5", status: "in_progress"}))
		w.ev("error", "error", obj("type", "too_many_requests", "code", "too_many_requests", "message", "Too Many Requests", "param", nil))
		out["error_nested.sse"] = w.b.String()
	}
	// Hosted-tool and unknown events.
	{
		o := respOpts{id: "resp_8d9e0f1a2b3c4d5e6f708192a3b4c5d6"}
		w := newSSE(srcSSE, "hosted-tool progress events and a web_search_call item (protocols.md §1.4 'Hosted-tool progress events'), plus an event type this decoder does not know")
		w.start(o)
		ws := "ws_8d9e0f1a2b3c4d5e6f708192a3b4c5d7"
		w.ev("response.output_item.added", "output_index", 0, "item", obj("id", ws, "type", "web_search_call", "status", "in_progress"))
		w.ev("response.web_search_call.in_progress", "output_index", 0, "item_id", ws)
		w.ev("response.web_search_call.searching", "output_index", 0, "item_id", ws)
		w.ev("response.web_search_call.completed", "output_index", 0, "item_id", ws)
		wsDone := obj("id", ws, "type", "web_search_call", "status", "completed", "action", obj("type", "search", "query", "refund policy"))
		w.ev("response.output_item.done", "output_index", 0, "item", wsDone)
		w.ev("response.future_feature.delta", "item_id", ws, "output_index", 0, "delta", "x")
		m := w.text(1, "msg_8d9e0f1a2b3c4d5e6f708192a3b4c5d8", "Found it.", -1)
		o.status, o.output, o.usage = "completed", arr(wsDone, m), usage(300, 0, 0, 20, 0)
		w.ev("response.completed", "response", response(o))
		out["unknown_events.sse"] = w.b.String()
	}
	// Stream cut in the middle of tool arguments.
	{
		o := refundBase
		o.id = "resp_9e0f1a2b3c4d5e6f708192a3b4c5d6e7"
		w := newSSE(srcSSE, "a stream cut after three function_call_arguments.delta events: no done, no terminal")
		w.start(o)
		id := "fc_9e0f1a2b3c4d5e6f708192a3b4c5d6e8"
		w.ev("response.output_item.added", "output_index", 0, "item", fcItem(id, "in_progress", "", "call_Zc4Vb7Nm1Qw8Er5Ty2Ui9OpA", "get_order_line"))
		for _, d := range split(adapterstest.CaptureTurn1[0].Arguments)[:3] {
			w.ev("response.function_call_arguments.delta", "item_id", id, "output_index", 0, "delta", d, "obfuscation", w.obfuscation())
		}
		out["cut_mid_args.sse"] = w.b.String()
	}
	// Only the terminal event, as the SDK's own tests send it.
	{
		o := respOpts{id: "resp_a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5"}
		w := newSSE("openai-go v3.98.0 deferred_tools_test.go and compaction_progress_stream_test.go serve a stream whose only output is the response.completed object")
		o.status = "completed"
		o.output = arr(fcItem("fc_a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d6", "completed", `{"policy_id":"aftersale-v3"}`, "call_Wd3Fg6Hj9Kl2Zx5Cv8Bn1MqA", "get_refund_policy"))
		o.usage = usage(90, 0, 0, 18, 0)
		w.ev("response.completed", "response", response(o))
		out["completed_only.sse"] = w.b.String()
	}
	for name, b := range genBodies() {
		out[name] = b
	}
	return out
}

// genBodies writes non-streaming Response bodies, pretty-printed as the
// API returns them (sources in testdata/SOURCES.md).
func genBodies() map[string]string {
	out := map[string]string{}
	pretty := func(r raw) string {
		var b bytes.Buffer
		if err := json.Indent(&b, []byte(r), "", "  "); err != nil {
			panic(err)
		}
		return b.String() + "\n"
	}
	refundBase := respOpts{tools: refundToolsJSON(), format: refundFormat(), reasoning: obj("effort", "low", "summary", "auto"), status: "completed"}
	t1, t2, t3 := refundBase, refundBase, refundBase
	t1.id, t2.id, t3.id = refundIDs.resp[1], refundIDs.resp[2], refundIDs.resp[3]
	t1.output = arr(rsItem(refundIDs.rs, []string{refundIDs.reasoningText}, refundIDs.encrypted),
		fcItem(refundIDs.fc[0], "completed", adapterstest.CaptureTurn1[0].Arguments, refundIDs.call[0], "get_order_line"))
	t1.usage = usage(1822, 0, 0, 87, 64)
	t2.output = arr(fcItem(refundIDs.fc[1], "completed", adapterstest.CaptureTurn2[0].Arguments, refundIDs.call[1], "get_refund_ledger"),
		fcItem(refundIDs.fc[2], "completed", adapterstest.CaptureTurn2[1].Arguments, refundIDs.call[2], "get_refund_policy"))
	t2.usage = usage(2106, 1792, 0, 61, 0)
	t3.output = arr(msgItem(refundIDs.msg, "completed", arr(textPart(adapterstest.CaptureModelText))))
	t3.usage = usage(2531, 2048, 384, 212, 0)
	out["refund_turn1.json"] = pretty(response(t1))
	out["refund_turn2.json"] = pretty(response(t2))
	out["refund_turn3.json"] = pretty(response(t3))

	ref := respOpts{id: "resp_2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f70", status: "completed", usage: usage(58, 0, 0, 12, 0)}
	ref.output = arr(msgItem("msg_2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f71", "completed", arr(refusalPartJSON("抱歉，我不能直接执行退款操作。"))))
	out["refusal.json"] = pretty(response(ref))

	inc := respOpts{id: "resp_3e4f5a6b7c8d9e0f1a2b3c4d5e6f7081", status: "incomplete", usage: usage(2400, 0, 0, 2048, 2048),
		incomplete: obj("reason", "max_output_tokens"), reasoning: obj("effort", "high", "summary", "auto")}
	inc.output = arr(rsItem("rs_3e4f5a6b7c8d9e0f1a2b3c4d5e6f7082", nil, "gAAAAABo8KHDdHJ1bmNhdGVkLXJlYXNvbmluZw=="))
	out["incomplete.json"] = pretty(response(inc))
	return out
}

// TestGenerateCaptures checks that the checked-in captures are what this
// generator writes, or rewrites them with -gen.
func TestGenerateCaptures(t *testing.T) {
	for name, body := range genCaptures() {
		path := filepath.Join("testdata", name)
		if *gen {
			if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != body {
			t.Errorf("%s differs from what the generator writes (run go test -run TestGenerateCaptures -gen)", name)
		}
	}
}
