package workshop

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/redact"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/timeline"
	"github.com/modelwire/modelwire/validate"
)

// SourceWorkshop marks a participant's recorded session.
const SourceWorkshop = "workshop"

// LayerWorkshop is the verdict layer a graded request is recorded with.
const LayerWorkshop validate.Layer = "workshop"

// recording is one participant's session in the store: each request an
// attempt of its own turn, with the tool results it carried and its
// grade as that turn's verdict.
type recording struct {
	j *timeline.StoreJournal
	n int // requests recorded
}

func newRecording(db *store.DB, ex *Exercise, label, protocol, model string) *recording {
	meta := store.SessionMeta{Title: "workshop " + ex.Name + " · " + label, Scenario: ex.Scenario, Protocol: protocol,
		Provider: "sim", Model: model, Source: SourceWorkshop}
	return &recording{j: timeline.NewStoreJournal(db, meta, false)}
}

func (rc *recording) id() string { return rc.j.SessionID() }

func parseBody(b []byte) gjson.Result { return gjson.ParseBytes(b) }

func (rc *recording) add(g sim.Graded, known *redact.Known, gr Grade) error {
	if _, err := rc.j.Start(); err != nil {
		return err
	}
	rc.n++
	turn := rc.n
	decl := g.Protocol.Declared(g.Path, parseBody(g.Body))
	m := store.AttemptMeta{Protocol: g.Protocol.Name, Method: "POST", URL: g.Path, Header: redact.Header(known.Header(g.Header)),
		Body: known.Bytes(g.Body), Stream: decl.Stream}
	if err := rc.j.RecordAttempt(session.Update{Kind: session.UpAttempt, Turn: turn, Attempt: 1, HTTPStatus: gr.Status, At: gr.At}, m); err != nil {
		return err
	}
	var body []byte
	if g.Rejected != nil {
		body = g.Rejected.Body
	}
	if err := rc.j.Record(session.Update{Kind: session.UpResponse, Turn: turn, Attempt: 1, ResponseBody: body, At: gr.At}); err != nil {
		return err
	}
	for _, r := range adapters.BodyResults(g.Protocol.Name, g.Body) {
		res := adapters.ToolResult{CallID: r.CallID, Name: r.Name, Content: known.Text(r.Content), IsError: r.IsError}
		if err := rc.j.Record(session.Update{Kind: session.UpResult, Turn: turn, Result: &res, At: gr.At}); err != nil {
			return err
		}
	}
	return rc.j.RecordVerdict(turn, []session.LayerResult{verdict(gr)})
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
