package samples

import (
	"fmt"
	"hash/fnv"
	"io"
	"strings"
	"sync"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
	"github.com/modelwire/modelwire/session"
)

// What the refund case's simulated model reads in a request. Everything it
// knows comes from here: the task's facts (through the scenario's reads,
// the same reading the domain checks use), the rules the instructions
// state, the output format the request asks for, the tools as declared
// and the results as sent. Each rule is one row of docs/simulator.md's
// "the request says → the simulated model" table.

// refundPrompt is one request's prompt as the model reads it.
type refundPrompt struct {
	facts session.Reading

	orderID, lineID string
	requested       int64
	haveRequested   bool
	claim           int64
	haveClaim       bool
	// historyTrusted: the history element is not marked verified="false"
	// (nor trust="unverified"): the model takes it as established.
	historyTrusted bool
	english        bool // the task has no Chinese: answer in English

	readOnly   bool // the instructions forbid submitting or claiming a refund
	asksSubmit bool // the task asks for the refund to be submitted
	oneAtATime bool // the instructions say one tool at a time
	asksIDs    bool // the instructions ask for evidence ids
	namesJSON  bool // the instructions speak of JSON or a schema
	bareJSON   bool // the instructions ask for exactly one JSON object
}

// The instruction rules, as words a teacher can point at. Each pattern is
// read in the system and developer text unless it says otherwise.
var (
	// A rule that makes the check read-only: the model then never says a
	// refund was made.
	readOnlyRule = session.LazyRegexp(`只读|不提交退款|不把生成回复等同于执行退款|(?i)read-only|do not (?:submit|issue|make) (?:a |the |any )?refund`)
	// The task asking for the refund itself (in the user's words); a
	// negation just before it ("不提交退款") is not a request.
	submitAsk     = session.LazyRegexp(`(?i)(?:直接|立即|马上|并|帮我|为我|请)?(?:提交|办理|执行)退款|直接退款|(?:submit|issue|process) the refund|refund (?:it|me) now`)
	submitNegated = session.LazyRegexp(`(?i)(?:不|别|勿|未|无需|不要|不用)\s*$|(?:not|n't|never|don't)\s*$`)
	oneToolRule   = session.LazyRegexp(`(?:一次|每次)只(?:调用|用|查)一个工具|不要并行|(?i)one tool (?:call )?at a time|never call tools in parallel`)
	evidenceAsk   = session.LazyRegexp(`证据\s*ID|证据编号|(?i)evidence[ -]ids?\b`)
	jsonMention   = session.LazyRegexp(`(?i)json|schema|结构化输出`)
	bareJSONAsk   = session.LazyRegexp(`(?i)exactly one JSON object|只输出(?:一个)?\s*JSON(?:\s*对象)?|仅输出(?:一个)?\s*JSON`)
)

// readings keeps the latest readings of the prompts the model was sent:
// a client sends the same instructions and task with every turn, and
// reading them (a dozen patterns over a few kilobytes) was most of a
// simulated request's cost.
type readings struct {
	mu   sync.Mutex
	byID map[uint64]reading
}

type reading struct {
	parts []adapters.PromptPart // the prompt, to tell a hash collision
	r     refundPrompt
}

// maxReadings bounds what the model remembers: past it, it starts over.
const maxReadings = 256

// read is the reading of in's prompt, from the cache when the same prompt
// was read before.
func (c *readings) read(sc *session.Scenario, in *adapters.Inbound) refundPrompt {
	h := fnv.New64a()
	for _, p := range in.Prompt {
		_, _ = h.Write([]byte{byte(len(p.Role))})
		_, _ = io.WriteString(h, string(p.Role))
		_, _ = io.WriteString(h, p.Text)
		_, _ = h.Write([]byte{0})
	}
	key := h.Sum64()
	c.mu.Lock()
	got, ok := c.byID[key]
	c.mu.Unlock()
	if ok && samePrompt(got.parts, in.Prompt) {
		return got.r
	}
	r := readRefundPrompt(sc, in)
	parts := make([]adapters.PromptPart, len(in.Prompt))
	for i, p := range in.Prompt {
		// The texts may share the request body's memory: a copy is kept.
		parts[i] = adapters.PromptPart{Role: p.Role, Text: strings.Clone(p.Text)}
	}
	c.mu.Lock()
	if c.byID == nil || len(c.byID) >= maxReadings {
		c.byID = map[uint64]reading{}
	}
	c.byID[key] = reading{parts: parts, r: r}
	c.mu.Unlock()
	return r
}

func samePrompt(a, b []adapters.PromptPart) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Role != b[i].Role || a[i].Text != b[i].Text {
			return false
		}
	}
	return true
}

func readRefundPrompt(sc *session.Scenario, in *adapters.Inbound) refundPrompt {
	p := session.Prompt(in.Prompt).Read()
	r := refundPrompt{facts: sc.ReadText(p)}
	r.orderID, r.lineID = r.facts.Str("order_id"), r.facts.Str("line_id")
	r.requested, r.haveRequested = r.facts.Cents("requested_cents")
	r.claim, r.haveClaim = r.facts.Cents("history_claim_cents")
	v := strings.ToLower(r.facts.Str("history_verified"))
	r.historyTrusted = r.haveClaim && v != "false" && v != "no" && v != "0"
	for _, el := range p.Elements("history") {
		if t, _ := el.Attr("trust"); t == adapters.TrustUnverified || t == adapters.TrustUntrusted {
			r.historyTrusted = false
		}
	}
	task, instr := p.Task, p.Instructions
	r.english = !session.HasHan(task)
	r.readOnly = readOnlyRule().MatchString(instr)
	for _, m := range submitAsk().FindAllStringIndex(task, -1) {
		if !submitNegated().MatchString(task[:m[0]]) {
			r.asksSubmit = true
		}
	}
	r.oneAtATime = oneToolRule().MatchString(instr)
	r.asksIDs = evidenceAsk().MatchString(instr)
	r.namesJSON = jsonMention().MatchString(instr)
	r.bareJSON = bareJSONAsk().MatchString(instr)
	return r
}

// lang picks the Chinese or the English words.
func (r refundPrompt) lang(zh, en string) string {
	if r.english {
		return en
	}
	return zh
}

// missing names what the task does not say that a check needs.
func (r refundPrompt) missing() []string {
	var out []string
	if r.orderID == "" {
		out = append(out, "order")
	}
	if r.lineID == "" {
		out = append(out, "line")
	}
	if !r.haveRequested {
		out = append(out, "amount")
	}
	return out
}

// readResult reads a tool result as a model does, whatever shape the
// application sent it in: a JSON object, the object inside a wrapper
// ({"output":…}, {"result":…}, {"content":…}, {"name":…,"content":…},
// {"response":…}), a string holding JSON, or content blocks of text. ok
// is false for an error ("status":"error", an "error" member, an error
// result) or anything that is not an object of facts.
func readResult(r adapters.ToolResult) (wire.Object, bool) {
	if r.IsError {
		return wire.Object{}, false
	}
	v, valid := wire.ParseString(r.Content)
	if !valid {
		return wire.Object{}, false
	}
	for depth := 0; depth < 6; depth++ {
		switch v.Kind() {
		case wire.KindString:
			if v, valid = wire.ParseString(v.Str()); !valid {
				return wire.Object{}, false
			}
			continue
		case wire.KindArray:
			var text strings.Builder
			for _, e := range v.Elements() {
				if b, ok := e.Members(); ok && b.Get("type").Str() == "text" {
					text.WriteString(b.Get("text").Str())
				}
			}
			if v, valid = wire.ParseString(text.String()); !valid {
				return wire.Object{}, false
			}
			continue
		case wire.KindObject:
		default:
			return wire.Object{}, false
		}
		m, _ := v.Members()
		if m.Get("status").Str() == "error" || m.Has("error") && m.Get("status").Str() != "ok" {
			return wire.Object{}, false
		}
		if inner, ok := wrapped(m); ok {
			v = inner
			continue
		}
		return m, true
	}
	return wire.Object{}, false
}

// wrapped is the value a wrapper object carries: one of the members
// clients put a result under, beside nothing but naming members.
func wrapped(m wire.Object) (wire.Value, bool) {
	var inner wire.Value
	found := 0
	for _, k := range m.Keys {
		switch k {
		case "output", "result", "content", "response", "data":
			inner = m.Get(k)
			found++
		case "name", "type", "tool", "tool_name", "call_id", "id", "tool_call_id", "tool_use_id":
		default:
			return wire.Value{}, false
		}
	}
	return inner, found == 1
}

// why lines: what the model read and which rules fired, for WhyHeader.
type whyLines []string

func (w *whyLines) add(rule, format string, args ...any) {
	*w = append(*w, rule+": "+fmt.Sprintf(format, args...))
}

// readWhy says what the model took from the prompt.
func (r refundPrompt) readWhy(w *whyLines) {
	w.add("task-facts", "the task names order %s, line %s, %s requested", orDash(r.orderID), orDash(r.lineID), centsOr(r.requested, r.haveRequested))
	switch {
	case !r.haveClaim:
		w.add("no-history-claim", "no <history> element states an amount")
	case r.historyTrusted:
		w.add("history-trusted", "trusted the history: its part has no verified=\"false\" label, so its %d cents is taken as the cap", r.claim)
	default:
		w.add("history-unverified", "the history's %d cents is marked verified=\"false\": a claim to check against the ledger, never a fact", r.claim)
	}
	if r.english {
		w.add("answer-language", "the task is not in Chinese: the answer is written in English")
	}
}

func orDash(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func centsOr(c int64, ok bool) string {
	if !ok {
		return "no amount"
	}
	return fmt.Sprintf("%d cents", c)
}
