package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/jsonschema"
	"github.com/modelwire/modelwire/session"
)

// outcome is what an exchange came to, as the layers judge it.
type outcome struct {
	status       int
	transportErr string
	sum          *adapters.Summary // nil when nothing was decoded
	req          request
	// replaced says what the client got instead of the response (hold
	// mode's rejection).
	replaced string
	// cancelled: the client went away before the body ended, after
	// forwarded bytes.
	cancelled bool
	forwarded int64
	// stopped is why the proxy itself was stopping when the copy was cut
	// (a signal), "" when it was not.
	stopped string
}

// judge runs the five layers on one exchange. The proxy sees one response
// and does not know the application, so: transport and protocol are
// judged for every exchange; schema when the request carried an output
// schema and the response is a final answer; parse and domain are skipped
// (the proxy does not know how the application reads the answer or its
// business rules). A response that stops for tool calls passes the
// protocol layer: for one exchange that is a complete answer.
func judge(o outcome) []session.LayerResult {
	tr := session.LayerResult{Layer: session.LayerTransport}
	switch {
	case o.transportErr != "":
		tr.Status, tr.Detail = session.Fail, o.transportErr
		if o.status != 0 {
			tr.Detail = fmt.Sprintf("HTTP %d, then %s", o.status, o.transportErr)
		}
	case o.status == 0:
		tr.Status, tr.Detail = session.Fail, "no response"
	case o.status < 200 || o.status > 299:
		tr.Status, tr.Detail = session.Fail, fmt.Sprintf("HTTP %d", o.status)
		if o.sum != nil && o.sum.Error != nil {
			tr.Detail += ": " + o.sum.Error.Error()
		}
	case o.cancelled && o.stopped != "" && (o.sum == nil || o.sum.Terminal == adapters.StatusUnknown):
		tr.Status, tr.Detail = session.Fail, fmt.Sprintf("HTTP %d, then cancelled: the proxy stopped (%s) after %d bytes", o.status, o.stopped, o.forwarded)
	case o.cancelled && (o.sum == nil || o.sum.Terminal == adapters.StatusUnknown):
		tr.Status, tr.Detail = session.Fail, fmt.Sprintf("HTTP %d, then cancelled: the client went away after %d bytes", o.status, o.forwarded)
	case o.cancelled:
		tr.Status, tr.Detail = session.Pass, fmt.Sprintf("HTTP %d, complete response (the client closed the connection after the last event)", o.status)
	default:
		tr.Status, tr.Detail = session.Pass, fmt.Sprintf("HTTP %d, complete body", o.status)
	}
	if o.replaced != "" {
		tr.Detail += "; " + o.replaced
	}

	pr := session.LayerResult{Layer: session.LayerProtocol, Status: session.Fail}
	f := o.sum
	switch {
	case o.req.protocol == "":
		pr.Status, pr.Detail = session.Skip, "not a protocol modelwire decodes: forwarded and recorded as it was"
	case o.status < 200 || o.status > 299 || f == nil:
		pr.Status, pr.Detail = session.Skip, "no response to judge"
	case session.TerminalProblem(f) != "":
		pr.Detail = session.TerminalProblem(f)
	case len(f.IncompleteToolCalls) > 0:
		pr.Detail = fmt.Sprintf("completed, but %d tool call(s) have arguments that are not a JSON object", len(f.IncompleteToolCalls))
	default:
		pr.Status, pr.Detail = session.Pass, fmt.Sprintf("one completed terminal (%s)", f.ProviderStopReason)
		if n := len(f.ToolCalls); n > 0 {
			pr.Detail += fmt.Sprintf(", %d tool call(s) proposed", n)
		}
	}

	parse := session.LayerResult{Layer: session.LayerParse, Status: session.Skip,
		Detail: "the proxy does not know how the application parses the answer"}
	if len(o.req.schema) > 0 {
		parse.Detail += " (the schema layer checks it against the request's own output schema)"
	}
	schema := judgeSchema(o, pr)
	domain := session.LayerResult{Layer: session.LayerDomain, Status: session.Skip, Detail: "the proxy does not know the application's business rules"}
	return []session.LayerResult{tr, pr, parse, schema, domain}
}

// judgeSchema checks a final answer against the output schema the request
// asked for.
func judgeSchema(o outcome, pr session.LayerResult) session.LayerResult {
	r := session.LayerResult{Layer: session.LayerSchema, Status: session.Skip}
	switch {
	case len(o.req.schema) == 0:
		r.Detail = "the request carried no output schema"
		if o.req.schemaNote != "" {
			r.Detail = o.req.schemaNote
		}
		return r
	case pr.Status != session.Pass:
		r.Detail = "not judged: the protocol layer did not pass"
		return r
	case o.sum.StopReason == adapters.StopToolCall:
		r.Detail = "the response stops for tool calls: no final answer to check"
		return r
	}
	obj, problem := oneObject(o.sum.Text)
	if problem != "" {
		r.Status, r.Detail = session.Fail, problem
		return r
	}
	s, err := jsonschema.CompileSchema(o.req.schema)
	if err != nil {
		r.Detail = "the request's output schema cannot be used: " + err.Error()
		return r
	}
	if vs := s.Validate(obj); len(vs) > 0 {
		r.Status, r.Detail = session.Fail, jsonschema.Joined(vs)
		return r
	}
	name := o.req.schemaName
	if name == "" {
		name = "the request's output schema"
	}
	r.Status, r.Detail = session.Pass, "matches "+name
	return r
}

// oneObject reads text as exactly one JSON object.
func oneObject(text string) (json.RawMessage, string) {
	t := strings.TrimSpace(text)
	switch {
	case t == "":
		return nil, "the final text is empty"
	case strings.HasPrefix(t, "```"):
		return nil, "the JSON is wrapped in a markdown code fence, not one JSON object"
	case !strings.HasPrefix(t, "{"):
		return nil, fmt.Sprintf("the final text does not start with a JSON object: %q", oneLine(t, 40))
	}
	dec := json.NewDecoder(strings.NewReader(t))
	var obj json.RawMessage
	if err := dec.Decode(&obj); err != nil {
		return nil, "not valid JSON: " + err.Error()
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Sprintf("text after the JSON object: %q", oneLine(t[dec.InputOffset():], 40))
	}
	var b bytes.Buffer
	_ = json.Compact(&b, obj)
	return b.Bytes(), ""
}

// JudgeExchange judges one exchange of an application's as the proxy
// does: a fork that re-sends the application's requests stands where the
// proxy stands (it knows the request, not the application), so its
// verdicts read as the parent's do.
func JudgeExchange(protocol, path string, body []byte, status int, transportErr string, sum *adapters.Summary) []session.LayerResult {
	return judge(outcome{status: status, transportErr: transportErr, sum: sum, req: readRequest(protocol, path, body)})
}
