package proxy

import (
	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/validate"
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

// judge runs the five layers on one exchange (validate.Judge, in the
// exchange's scope). The proxy sees one response and does not know the
// application, so: transport and protocol are judged for every exchange;
// schema when the request carried an output schema and the response is a
// final answer; parse and domain are skipped (the proxy does not know how
// the application reads the answer or its business rules). A response
// that stops for tool calls passes the protocol layer: for one exchange
// that is a complete answer.
func judge(o outcome) []validate.LayerResult {
	layers, _ := validate.Judge(validate.Input{
		Scope: validate.Exchange,
		Outcome: validate.Outcome{
			HTTPStatus: o.status, TransportErr: o.transportErr, Final: o.sum,
			Undecoded: o.req.protocol == "", Replaced: o.replaced,
			Cancelled: o.cancelled, Forwarded: o.forwarded, Shutdown: o.stopped,
		},
		Contract: validate.Contract{RawSchema: o.req.schema, Name: o.req.schemaName, Note: o.req.schemaNote},
	})
	return layers
}

// JudgeExchange judges one exchange of an application's as the proxy
// does: a fork that re-sends the application's requests stands where the
// proxy stands (it knows the request, not the application), so its
// verdicts read as the parent's do.
func JudgeExchange(protocol, path string, body []byte, status int, transportErr string, sum *adapters.Summary) []validate.LayerResult {
	return judge(outcome{status: status, transportErr: transportErr, sum: sum, req: readRequest(protocol, path, body)})
}
