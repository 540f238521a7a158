package session

import (
	"github.com/modelwire/modelwire/store"

	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/jsonschema"
)

// The five validation layers, in order. A failure names its layer, so a
// person knows whether to fix the transport, the protocol handling, the
// prompt, the schema or the business rule.
const (
	LayerTransport = "transport"
	LayerProtocol  = "protocol"
	LayerParse     = "parse"
	LayerSchema    = "schema"
	LayerDomain    = "domain"
)

// Layers lists the layers in order.
var Layers = []string{LayerTransport, LayerProtocol, LayerParse, LayerSchema, LayerDomain}

// Verdict is a layer's outcome. A layer that could not be judged (no
// answer to parse, no checks to run) is skipped and says why: never a
// pass. The store keeps verdicts as they are (store.Verdict).
type Verdict = store.Verdict

// The verdicts.
const (
	Pass Verdict = "pass"
	Fail Verdict = "fail"
	Skip Verdict = "skip"
)

// LayerResult is one layer's verdict.
type LayerResult struct {
	Layer  string  `json:"layer"`
	Status Verdict `json:"status"`
	Detail string  `json:"detail"`
}

// CheckResult is one business check's verdict.
type CheckResult struct {
	ID     string `json:"id"`
	Pass   bool   `json:"pass"`
	Detail string `json:"detail"`
	// Shown are the values the check names (its show list), each with
	// the expression it was read by, on a pass as on a failure.
	Shown []Shown `json:"shown,omitempty"`
}

// Shown is one value a check shows: the expression and its JSON value.
type Shown struct {
	Expr  string          `json:"expr"`
	Value json.RawMessage `json:"value"`
}

// Domain is the domain layer's working, for a person to read: every
// check with its verdict and the values it used, and every fact with its
// value and the observations it was computed from. A pass shows it as a
// failure does.
type Domain struct {
	Checks []CheckResult `json:"checks"`
	Facts  []FactResult  `json:"facts,omitempty"`
}

// Outcome is what a session's run produced, as the validator needs it.
type Outcome struct {
	// HTTPStatus of the last attempt (0 when no response came).
	HTTPStatus int
	// TransportErr is a connection, timeout or read failure, by name.
	TransportErr string
	// Retries made before the last attempt, and why.
	Retries []string
	// RetryNote says why a retryable error was not retried.
	RetryNote string
	// Final is the summary of the last response, nil when none came.
	Final *adapters.Summary
	// Unanswered lists call ids proposed without a result sent back.
	Unanswered []string
	// TurnLimitHit: the loop stopped at the scenario's turn limit.
	TurnLimitHit bool
	// Stopped: the session ended before the model answered (a rejected
	// proposal with the reject policy, or cancellation).
	Stopped string
}

// Validate runs the five layers. Transport and protocol are judged
// whenever a response arrived; parse, schema and domain only when the
// layer before them passed, since they need a trustworthy answer.
func Validate(sc *Scenario, o Outcome, obs *Observations) (results []LayerResult, output json.RawMessage) {
	transport := judgeTransport(o)
	protocol := judgeProtocol(o)
	results = append(results, transport, protocol)
	prev := protocol
	if transport.Status == Fail && o.Final == nil {
		prev = transport
	}
	skipRest := func(from []string, because LayerResult) {
		for _, l := range from {
			results = append(results, LayerResult{Layer: l, Status: Skip, Detail: fmt.Sprintf("not judged: the %s layer failed", because.Layer)})
		}
	}
	if prev.Status != Pass {
		skipRest([]string{LayerParse, LayerSchema, LayerDomain}, prev)
		return results, nil
	}
	parse, obj := judgeParse(sc, o.Final.Text)
	results = append(results, parse)
	if parse.Status == Fail {
		skipRest([]string{LayerSchema, LayerDomain}, parse)
		return results, nil
	}
	output = obj
	schema := judgeSchema(sc, obj)
	results = append(results, schema)
	if schema.Status == Fail {
		skipRest([]string{LayerDomain}, schema)
		return results, output
	}
	results = append(results, judgeDomain(sc, obj, obs))
	return results, output
}

func judgeTransport(o Outcome) LayerResult {
	r := LayerResult{Layer: LayerTransport}
	retried := ""
	if len(o.Retries) > 0 {
		retried = fmt.Sprintf(" after %d retr%s (%s)", len(o.Retries), plural(len(o.Retries), "y", "ies"), strings.Join(o.Retries, ", "))
	}
	switch {
	case o.TransportErr != "":
		r.Status, r.Detail = Fail, o.TransportErr+retried
	case o.HTTPStatus == 0:
		r.Status, r.Detail = Fail, "no response"
	case o.HTTPStatus < 200 || o.HTTPStatus > 299:
		r.Status, r.Detail = Fail, fmt.Sprintf("HTTP %d%s", o.HTTPStatus, retried)
		if o.Final != nil && o.Final.Error != nil {
			r.Detail += ": " + o.Final.Error.Message
		}
		if o.RetryNote != "" {
			r.Detail += "; " + o.RetryNote
		}
	default:
		r.Status, r.Detail = Pass, fmt.Sprintf("HTTP %d, complete body%s", o.HTTPStatus, retried)
	}
	return r
}

func judgeProtocol(o Outcome) LayerResult {
	r := LayerResult{Layer: LayerProtocol, Status: Fail}
	f := o.Final
	switch {
	case o.Stopped != "":
		r.Detail = o.Stopped
	case f == nil:
		r.Status, r.Detail = Skip, "no response to judge"
	case TerminalProblem(f) != "":
		r.Detail = TerminalProblem(f)
	case o.TurnLimitHit:
		r.Detail = "stopped at the turn limit with tool calls still being proposed"
	case len(o.Unanswered) > 0:
		r.Detail = "tool calls without a result: " + strings.Join(o.Unanswered, ", ")
	case f.StopReason == adapters.StopToolCall:
		r.Detail = "the last response asked for tools; there is no final answer"
	default:
		r.Status, r.Detail = Pass, fmt.Sprintf("one completed terminal (%s), every call answered", f.ProviderStopReason)
	}
	return r
}

// TerminalProblem says what is wrong with a response's terminal state for
// the protocol layer — a cut stream, a refusal, a truncation, a failure —
// or "" when it completed. The engine and the proxy judge by it alike.
func TerminalProblem(f *adapters.Summary) string {
	switch f.Terminal {
	case adapters.StatusCompleted:
		return ""
	case adapters.StatusUnknown:
		d := "no terminal event: the stream was cut"
		if n := len(f.IncompleteToolCalls); n > 0 {
			d += fmt.Sprintf("; %d tool call(s) never closed, so none was proposed", n)
		}
		return d
	case adapters.StatusRefused:
		d := "the model refused"
		if f.Refusal != nil && *f.Refusal != "" {
			d += ": " + oneLine(*f.Refusal, 120)
		}
		return d
	case adapters.StatusIncomplete:
		return fmt.Sprintf("truncated (%s)", f.ProviderStopReason)
	case adapters.StatusFailed:
		d := "the response failed"
		if f.Error != nil {
			d += ": " + f.Error.Error()
		}
		return d
	}
	return fmt.Sprintf("terminal %s", f.Terminal)
}

// TerminalAdvice says what the application may do next after a terminal
// state that is not an answer (13.4.2): "" for a completed response.
func TerminalAdvice(status adapters.Status, stop adapters.StopReason) string {
	switch {
	case stop == adapters.StopPause:
		return "paused (Anthropic pause_turn): send the response back as the assistant turn, unchanged, to let it continue; it is not a final answer"
	case status == adapters.StatusRefused:
		return "refused (refusal or content filter): do not retry the same request; show the user an explainable message, record the event, or change the request and ask again"
	case status == adapters.StatusIncomplete:
		return "truncated: the text is not an answer and no cut tool call may run; raise the output budget, shorten the input, or ask for less"
	case status == adapters.StatusUnknown:
		return "no terminal event: the stream was cut; do not run half-received calls, do not assume SSE resumes; a new attempt is a new generation"
	case status == adapters.StatusFailed:
		return "the provider failed mid-response: treat it as a failed attempt; the usage received so far is billed"
	}
	return ""
}

func judgeParse(sc *Scenario, text string) (LayerResult, json.RawMessage) {
	r := LayerResult{Layer: LayerParse, Status: Fail}
	if sc.Output.Mode == adapters.OutputText || sc.Output.Mode == "" {
		r.Status, r.Detail = Skip, "the output contract is free text"
		if sc.application {
			r.Detail = "the request asks for no output schema; modelwire does not know how the application parses the answer"
		}
		return r, nil
	}
	t := strings.TrimSpace(text)
	switch {
	case t == "":
		r.Detail = "the final text is empty"
		return r, nil
	case strings.HasPrefix(t, "```"):
		r.Detail = "the JSON is wrapped in a markdown code fence; the contract asks for exactly one JSON object"
		return r, nil
	case !strings.HasPrefix(t, "{"):
		r.Detail = fmt.Sprintf("the final text does not start with a JSON object: %q", oneLine(t, 40))
		return r, nil
	}
	dec := json.NewDecoder(strings.NewReader(t))
	var obj json.RawMessage
	if err := dec.Decode(&obj); err != nil {
		r.Detail = "not valid JSON: " + err.Error()
		return r, nil
	}
	if _, err := dec.Token(); err != io.EOF {
		rest := strings.TrimSpace(t[dec.InputOffset():])
		r.Detail = fmt.Sprintf("text after the JSON object: %q", oneLine(rest, 40))
		return r, nil
	}
	var b bytes.Buffer
	_ = json.Compact(&b, obj)
	r.Status, r.Detail = Pass, "exactly one JSON object"
	return r, b.Bytes()
}

func judgeSchema(sc *Scenario, obj json.RawMessage) LayerResult {
	r := LayerResult{Layer: LayerSchema}
	s := sc.OutputSchema()
	if s == nil {
		r.Status, r.Detail = Skip, "no output schema"
		return r
	}
	if vs := s.Validate(obj); vs != nil {
		r.Status, r.Detail = Fail, jsonschema.Joined(vs)
		return r
	}
	r.Status, r.Detail = Pass, fmt.Sprintf("matches %s", sc.Output.Name)
	return r
}

func judgeDomain(sc *Scenario, obj json.RawMessage, obs *Observations) LayerResult {
	r := LayerResult{Layer: LayerDomain}
	checks := RunChecks(sc, obj, obs)
	if len(checks) == 0 {
		r.Status, r.Detail = Skip, "the scenario has no business checks"
		if sc.application {
			r.Detail = "modelwire does not know the application's business rules"
		}
		return r
	}
	var failed []string
	for _, c := range checks {
		if !c.Pass {
			failed = append(failed, c.ID+": "+c.Detail)
		}
	}
	if len(failed) > 0 {
		r.Status, r.Detail = Fail, strings.Join(failed, "; ")
		return r
	}
	r.Status, r.Detail = Pass, fmt.Sprintf("%d business checks pass", len(checks))
	return r
}

// RunChecks runs the scenario's checks on an answer, with the facts
// computed from this session's observations.
func RunChecks(sc *Scenario, obj json.RawMessage, obs *Observations) []CheckResult {
	checks, _ := runChecks(sc, obj, obs)
	return checks
}

// ExplainDomain runs the checks as the domain layer does and keeps their
// working: the checks' values and the facts with what they read. It is
// nil when the layers did not judge the domain (an earlier layer failed,
// or the scenario has no checks).
func ExplainDomain(sc *Scenario, layers []LayerResult, obj json.RawMessage, obs *Observations) *Domain {
	judged := false
	for _, l := range layers {
		judged = judged || l.Layer == LayerDomain && l.Status != Skip
	}
	if !judged || sc == nil || obs == nil {
		return nil
	}
	checks, env := runChecks(sc, obj, obs)
	return &Domain{Checks: checks, Facts: sc.explainFacts(env)}
}

// runChecks runs the checks and returns them with the environment the
// expressions saw (the facts computed in it).
func runChecks(sc *Scenario, obj json.RawMessage, obs *Observations) ([]CheckResult, map[string]any) {
	var doc any
	d := json.NewDecoder(bytes.NewReader(obj))
	d.UseNumber()
	_ = d.Decode(&doc)
	var answer any
	_ = json.Unmarshal(obj, &answer)
	env := exprEnv(answer, obs)
	env[stopName] = obs.Stop
	for name, v := range sc.ReadPrompt(obs.Prompt) {
		if c, ok := v.(int64); ok {
			v = int(c) // expr's own integer
		}
		env[name] = v
	}
	out := sc.computeFacts(env)
	for i, c := range sc.Checks {
		if i < len(sc.checkPrograms) && sc.checkPrograms[i] != nil {
			out = append(out, runExprCheck(c, sc.checkPrograms[i], env))
			continue
		}
		out = append(out, runCheck(c, doc))
	}
	return out, env
}

func runCheck(c Check, doc any) CheckResult {
	res := CheckResult{ID: c.ID, Pass: true}
	fail := func(format string, args ...any) CheckResult {
		res.Pass = false
		res.Detail = fmt.Sprintf(format, args...)
		if c.Message != "" {
			res.Detail = c.Message + " (" + res.Detail + ")"
		}
		return res
	}
	v, found := Lookup(doc, c.Pointer)
	if c.Exists != nil {
		if found != *c.Exists {
			return fail("%s exists: %v", c.Pointer, found)
		}
		if !found {
			return res
		}
	}
	if !found {
		return fail("%s is missing", c.Pointer)
	}
	if len(c.Equals) > 0 {
		var want any
		d := json.NewDecoder(bytes.NewReader(c.Equals))
		d.UseNumber()
		_ = d.Decode(&want)
		if !sameJSON(v, want) {
			return fail("%s is %s, want %s", c.Pointer, show(v), show(want))
		}
	}
	if len(c.OneOf) > 0 {
		ok := false
		for _, w := range c.OneOf {
			ok = ok || sameJSON(v, w)
		}
		if !ok {
			return fail("%s is %s, want one of %s", c.Pointer, show(v), show(c.OneOf))
		}
	}
	for _, rel := range []struct {
		op  string
		o   *Operand
		cmp func(a, b float64) bool
	}{
		{"<", c.LT, func(a, b float64) bool { return a < b }},
		{"<=", c.LTE, func(a, b float64) bool { return a <= b }},
		{">", c.GT, func(a, b float64) bool { return a > b }},
		{">=", c.GTE, func(a, b float64) bool { return a >= b }},
	} {
		if rel.o == nil {
			continue
		}
		a, ok := number(v)
		if !ok {
			return fail("%s is %s, not a number", c.Pointer, show(v))
		}
		b, label := math.NaN(), ""
		if rel.o.Number != nil {
			b, label = *rel.o.Number, show(*rel.o.Number)
		} else if w, found := Lookup(doc, rel.o.Pointer); found {
			b, _ = number(w)
			label = fmt.Sprintf("%s (%s)", rel.o.Pointer, show(w))
		}
		if math.IsNaN(b) || !rel.cmp(a, b) {
			return fail("%s is %s, want %s %s", c.Pointer, show(v), rel.op, label)
		}
	}
	return res
}

// Lookup resolves a JSON pointer in a decoded document; checks may also
// write "/" for the whole document and leave out the leading slash.
func Lookup(doc any, ptr string) (any, bool) {
	if ptr == "/" {
		return doc, true
	}
	if ptr != "" && !strings.HasPrefix(ptr, "/") {
		ptr = "/" + ptr
	}
	return jsonschema.Lookup(doc, ptr)
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64:
		return x, true
	case int: // an expression's integer result
		return float64(x), true
	}
	return 0, false
}

func sameJSON(a, b any) bool {
	na, aok := number(a)
	nb, bok := number(b)
	if aok && bok {
		return na == nb
	}
	return reflect.DeepEqual(normalise(a), normalise(b))
}

func normalise(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
