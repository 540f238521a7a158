package workshop

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/redact"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/timeline"
	"github.com/modelwire/modelwire/validate"
)

// SourceWorkshop marks a participant's recorded session.
const SourceWorkshop = store.SourceWorkshop

// LayerWorkshop is the verdict layer a graded request is recorded with.
const LayerWorkshop validate.Layer = "workshop"

// recording is one participant's session in the store: each request an
// attempt of its own turn, with the tool results it carried and its
// grade as that turn's verdict.
type recording struct {
	j *timeline.StoreJournal
	n int // requests numbered (under the room's lock)
}

func newRecording(db *store.DB, ex *Exercise, label, protocol, model string) *recording {
	meta := store.SessionMeta{Title: "workshop " + ex.Name + " · " + label, Scenario: ex.Scenario, Protocol: protocol,
		Provider: "sim", Model: model, Source: SourceWorkshop}
	return &recording{j: timeline.NewStoreJournal(db, meta, false)}
}

func (rc *recording) id() string { return rc.j.SessionID() }

func parseBody(b []byte) gjson.Result { return gjson.ParseBytes(b) }

// add records request number turn: the tool results it carried, its
// attempt with the answer, the answer decoded as the protocol's events (a
// stream event by event), and its grade as the turn's verdict.
func (rc *recording) add(turn int, g sim.Graded, known *redact.Known, gr Grade, a sim.Answer) error {
	if _, err := rc.j.Start(); err != nil {
		return err
	}
	for _, r := range adapters.BodyResults(g.Protocol.Name, g.Body) {
		res := adapters.ToolResult{CallID: r.CallID, Name: r.Name, Content: known.Text(r.Content), IsError: r.IsError}
		if err := rc.j.Record(session.Update{Kind: session.UpResult, Turn: turn, Result: &res, At: gr.At}); err != nil {
			return err
		}
	}
	decl := g.Protocol.Declared(g.Path, parseBody(g.Body))
	m := store.AttemptMeta{Protocol: g.Protocol.Name, Method: http.MethodPost, URL: g.Path, Header: redact.Header(known.Header(g.Header)),
		Body: known.Bytes(g.Body), Stream: decl.Stream}
	u := session.Update{Kind: session.UpAttempt, Turn: turn, Attempt: 1, HTTPStatus: a.Status, Header: a.Header, At: gr.At}
	if a.Status == 0 {
		u.Err = "the connection closed before the answer's headers"
	}
	if err := rc.j.RecordAttempt(u, m); err != nil {
		return err
	}
	if a.Status != 0 {
		sum, err := rc.steps(turn, g.Protocol.Name, a, known)
		if err != nil {
			return err
		}
		if err := rc.j.Record(session.Update{Kind: session.UpResponse, Turn: turn, Attempt: 1, Summary: &sum}); err != nil {
			return err
		}
	}
	return rc.j.RecordVerdict(turn, []session.LayerResult{verdict(gr)})
}

// steps records the answer as the protocol's events and returns what it
// reduces to: a refusal as the provider's error, a stream event by event,
// a body whole.
func (rc *recording) steps(turn int, protocol string, a sim.Answer, known *redact.Known) (adapters.Summary, error) {
	prot, err := registry.Lookup(protocol)
	if err != nil {
		return adapters.Summary{}, err
	}
	st := adapters.NewStream(prot)
	body := known.Bytes(a.Body)
	record := func(step adapters.Step) error {
		return rc.j.Record(session.Update{Kind: session.UpStep, Turn: turn, Attempt: 1, Step: &step})
	}
	switch {
	case a.Status < 200 || a.Status > 299:
		apiErr := prot.DecodeError(a.Status, a.Header, body)
		evs := st.Reducer().Apply([]adapters.Event{{Type: adapters.EvTerminal, Status: adapters.StatusFailed, StopReason: adapters.StopError, Error: apiErr}})
		err = record(adapters.Step{Raw: adapters.RawEvent{Data: string(body)}, Events: evs})
	case adapters.LooksLikeStream(body):
		err = adapters.ReadStream(prot, st, bytes.NewReader(body), record)
	default:
		err = record(adapters.Step{Raw: adapters.RawEvent{Data: string(body)}, Events: st.FeedBody(body)})
	}
	if err == nil && a.Cut {
		err = record(adapters.Step{Index: -1, Events: []adapters.Event{adapters.Diag(adapters.DiagReadError,
			fmt.Sprintf("the answer is larger than %d bytes: the rest was sent, not recorded", sim.MaxAnswer))}})
	}
	return st.Summary(), err
}

// verdict is a grade as a stored layer.
func verdict(gr Grade) session.LayerResult {
	if gr.Step == "" {
		return session.LayerResult{Layer: LayerWorkshop, Status: validate.Skip, Detail: fmt.Sprintf("turn %d: no step of the exercise", gr.Turn)}
	}
	st := validate.Pass
	var b strings.Builder
	fmt.Fprintf(&b, "step %d (%s): %d/%d checks pass", gr.StepIndex, gr.Step, gr.Passed, gr.Total)
	for _, f := range gr.Failed {
		st = validate.Fail
		fmt.Fprintf(&b, "; %s: §%s %s", f.Check, f.Section, f.Hint.EN)
		if f.Detail != "" {
			fmt.Fprintf(&b, " (%s)", f.Detail)
		}
	}
	return session.LayerResult{Layer: LayerWorkshop, Status: st, Detail: b.String()}
}
