package validate

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/jsonschema"
)

// Scope says what the caller judges and what it knows.
type Scope int

const (
	// Scenario: a session modelwire ran whole, the loop to its final
	// answer, with the scenario's output contract and business checks.
	Scenario Scope = iota
	// Application: a session that re-sent an application's requests; it
	// is judged as a scenario is, but modelwire does not know how the
	// application parses the answer nor its business rules.
	Application
	// Exchange: one request and its response, judged alone (the proxy,
	// or a fork of a proxied session, which stands where the proxy
	// stands). A response that stops for tool calls is a complete answer
	// for one exchange; how the application parses the answer is not
	// known, so the parse layer is skipped and the schema layer reads the
	// answer as one JSON object when the request carried a schema.
	Exchange
)

// Outcome is what a session or an exchange came to.
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

	// What only an exchange comes to:

	// Undecoded: the exchange's protocol is not one modelwire decodes.
	Undecoded bool
	// Replaced says what the client got instead of the response (the
	// proxy's hold mode rejected it).
	Replaced string
	// Cancelled: the client went away before the body ended, after
	// Forwarded bytes.
	Cancelled bool
	Forwarded int64
	// Shutdown is why the proxy itself was stopping when the copy was cut
	// (a signal), "" when it was not.
	Shutdown string
}

// Contract is the output contract the answer is judged against.
type Contract struct {
	// Mode: a free-text contract (OutputText or "") is not parsed.
	Mode adapters.OutputMode
	// Schema is the compiled output schema; when nil, RawSchema (a
	// request's own) is compiled when it is needed.
	Schema    *jsonschema.Schema
	RawSchema json.RawMessage
	// Name is the schema's name, as a pass says it matches.
	Name string
	// Note says why there is no schema, when there is none (a request's
	// schema modelwire does not read).
	Note string
}

func (c Contract) hasSchema() bool { return c.Schema != nil || len(c.RawSchema) > 0 }

// Check is one business check's outcome, as the domain layer counts it.
type Check struct {
	ID     string
	Pass   bool
	Detail string
}

// Input is what Judge judges.
type Input struct {
	Scope    Scope
	Outcome  Outcome
	Contract Contract
	// Domain runs the business checks on the parsed answer. Nil, or no
	// checks, skips the domain layer with the scope's reason.
	Domain func(answer json.RawMessage) []Check
}

// Judge runs the five layers, in order. Transport and protocol are judged
// whenever a response arrived. In a session, parse, schema and domain are
// judged only when the layer before them passed, since they need a
// trustworthy answer; answer is the parsed, compacted JSON object when
// the parse layer passed. For an exchange, see Exchange.
func Judge(in Input) (results []LayerResult, answer json.RawMessage) {
	o := in.Outcome
	transport := judgeTransport(in.Scope, o)
	protocol := judgeProtocol(in.Scope, o)
	results = append(results, transport, protocol)
	if in.Scope == Exchange {
		return append(results, judgeExchangeAnswer(in, protocol)...), nil
	}
	prev := protocol
	if transport.Status == Fail && o.Final == nil {
		prev = transport
	}
	skipRest := func(because LayerResult) {
		for _, l := range Layers[len(results):] {
			results = append(results, LayerResult{Layer: l, Status: Skip, Detail: notJudged(because.Layer)})
		}
	}
	if prev.Status != Pass {
		skipRest(prev)
		return results, nil
	}
	parse, obj := judgeParse(in.Scope, in.Contract, o.Final.Text)
	results = append(results, parse)
	if parse.Status == Fail {
		skipRest(parse)
		return results, nil
	}
	schema := judgeSchema(in.Contract, obj)
	results = append(results, schema)
	if schema.Status == Fail {
		skipRest(schema)
		return results, obj
	}
	return append(results, judgeDomain(in, obj)), obj
}

func judgeTransport(scope Scope, o Outcome) LayerResult {
	r := LayerResult{Layer: Transport}
	retried := ""
	if len(o.Retries) > 0 {
		retried = fmt.Sprintf(" after %d retr%s (%s)", len(o.Retries), plural(len(o.Retries), "y", "ies"), strings.Join(o.Retries, ", "))
	}
	exchange := scope == Exchange
	unfinished := o.Final == nil || o.Final.Terminal == adapters.StatusUnknown
	switch {
	case o.TransportErr != "" && exchange && o.HTTPStatus != 0:
		r.Status, r.Detail = Fail, fmt.Sprintf("HTTP %d, then %s", o.HTTPStatus, o.TransportErr)
	case o.TransportErr != "":
		r.Status, r.Detail = Fail, o.TransportErr+retried
	case o.HTTPStatus == 0:
		r.Status, r.Detail = Fail, "no response"
	case o.HTTPStatus < 200 || o.HTTPStatus > 299:
		r.Status, r.Detail = Fail, fmt.Sprintf("HTTP %d%s", o.HTTPStatus, retried)
		if o.Final != nil && o.Final.Error != nil {
			if exchange {
				r.Detail += ": " + o.Final.Error.Error()
			} else {
				r.Detail += ": " + o.Final.Error.Message
			}
		}
		if o.RetryNote != "" {
			r.Detail += "; " + o.RetryNote
		}
	case o.Cancelled && o.Shutdown != "" && unfinished:
		r.Status, r.Detail = Fail, fmt.Sprintf("HTTP %d, then cancelled: the proxy stopped (%s) after %d bytes", o.HTTPStatus, o.Shutdown, o.Forwarded)
	case o.Cancelled && unfinished:
		r.Status, r.Detail = Fail, fmt.Sprintf("HTTP %d, then cancelled: the client went away after %d bytes", o.HTTPStatus, o.Forwarded)
	case o.Cancelled:
		r.Status, r.Detail = Pass, fmt.Sprintf("HTTP %d, complete response (the client closed the connection after the last event)", o.HTTPStatus)
	default:
		r.Status, r.Detail = Pass, fmt.Sprintf("HTTP %d, complete body%s", o.HTTPStatus, retried)
	}
	if o.Replaced != "" {
		r.Detail += "; " + o.Replaced
	}
	return r
}

func judgeProtocol(scope Scope, o Outcome) LayerResult {
	r := LayerResult{Layer: Protocol, Status: Fail}
	f := o.Final
	exchange := scope == Exchange
	switch {
	case o.Undecoded:
		r.Status, r.Detail = Skip, "not a protocol modelwire decodes: forwarded and recorded as it was"
	case o.Stopped != "":
		r.Detail = o.Stopped
	case f == nil, exchange && (o.HTTPStatus < 200 || o.HTTPStatus > 299):
		r.Status, r.Detail = Skip, "no response to judge"
	case TerminalProblem(f) != "":
		r.Detail = TerminalProblem(f)
	case o.TurnLimitHit:
		r.Detail = "stopped at the turn limit with tool calls still being proposed"
	case len(o.Unanswered) > 0:
		r.Detail = "tool calls without a result: " + strings.Join(o.Unanswered, ", ")
	case exchange && len(f.IncompleteToolCalls) > 0:
		r.Detail = fmt.Sprintf("completed, but %d tool call(s) have arguments that are not a JSON object", len(f.IncompleteToolCalls))
	case exchange:
		r.Status, r.Detail = Pass, fmt.Sprintf("one completed terminal (%s)", f.ProviderStopReason)
		if n := len(f.ToolCalls); n > 0 {
			r.Detail += fmt.Sprintf(", %d tool call(s) proposed", n)
		}
	case f.StopReason == adapters.StopToolCall:
		r.Detail = "the last response asked for tools; there is no final answer"
	default:
		r.Status, r.Detail = Pass, fmt.Sprintf("one completed terminal (%s), every call answered", f.ProviderStopReason)
	}
	return r
}

// judgeParse reads a session's final text per its output contract.
func judgeParse(scope Scope, c Contract, text string) (LayerResult, json.RawMessage) {
	r := LayerResult{Layer: Parse, Status: Fail}
	if c.Mode == adapters.OutputText || c.Mode == "" {
		r.Status, r.Detail = Skip, "the output contract is free text"
		if scope == Application {
			r.Detail = "the request asks for no output schema; modelwire does not know how the application parses the answer"
		}
		return r, nil
	}
	obj, problem := ParseObject(text, scope)
	if problem != "" {
		r.Detail = problem
		return r, nil
	}
	r.Status, r.Detail = Pass, "exactly one JSON object"
	return r, obj
}

// judgeSchema checks a parsed answer against the contract's schema.
func judgeSchema(c Contract, obj json.RawMessage) LayerResult {
	r := LayerResult{Layer: Schema, Status: Skip}
	s := c.Schema
	if s == nil && len(c.RawSchema) > 0 {
		var err error
		if s, err = jsonschema.CompileSchema(c.RawSchema); err != nil {
			r.Detail = "the request's output schema cannot be used: " + err.Error()
			return r
		}
	}
	if s == nil {
		r.Detail = "no output schema"
		return r
	}
	if vs := s.Validate(obj); len(vs) > 0 {
		r.Status, r.Detail = Fail, jsonschema.Joined(vs)
		return r
	}
	r.Status, r.Detail = Pass, "matches "+c.Name
	return r
}

func judgeDomain(in Input, obj json.RawMessage) LayerResult {
	r := LayerResult{Layer: Domain}
	var checks []Check
	if in.Domain != nil {
		checks = in.Domain(obj)
	}
	if len(checks) == 0 {
		r.Status, r.Detail = Skip, noRules(in.Scope)
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

// noRules is why the domain layer has nothing to run.
func noRules(scope Scope) string {
	switch scope {
	case Application:
		return "modelwire does not know the application's business rules"
	case Exchange:
		return "the proxy does not know the application's business rules"
	}
	return "the scenario has no business checks"
}

// judgeExchangeAnswer is the parse, schema and domain layers of one
// exchange: parse is skipped (the application's parsing is not known);
// schema checks a final answer against the request's own output schema,
// reading it as one JSON object; domain runs only when the caller passes
// the rules.
func judgeExchangeAnswer(in Input, protocol LayerResult) []LayerResult {
	c, f := in.Contract, in.Outcome.Final
	parse := LayerResult{Layer: Parse, Status: Skip, Detail: "the proxy does not know how the application parses the answer"}
	if c.hasSchema() {
		parse.Detail += " (the schema layer checks it against the request's own output schema)"
	}
	schema := LayerResult{Layer: Schema, Status: Skip}
	var obj json.RawMessage
	switch {
	case !c.hasSchema():
		schema.Detail = "the request carried no output schema"
		if c.Note != "" {
			schema.Detail = c.Note
		}
	case protocol.Status != Pass:
		schema.Detail = "not judged: the protocol layer did not pass"
	case f.StopReason == adapters.StopToolCall:
		schema.Detail = "the response stops for tool calls: no final answer to check"
	default:
		var problem string
		if obj, problem = ParseObject(f.Text, Exchange); problem != "" {
			schema.Status, schema.Detail = Fail, problem
			break
		}
		if c.Name == "" {
			c.Name = "the request's output schema"
		}
		schema = judgeSchema(c, obj)
	}
	domain := LayerResult{Layer: Domain, Status: Skip, Detail: noRules(Exchange)}
	if in.Domain != nil && schema.Status == Pass {
		domain = judgeDomain(in, obj)
	}
	return []LayerResult{parse, schema, domain}
}
