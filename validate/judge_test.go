package validate_test

import (
	"encoding/json"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/validate"
)

func final(text string, stop adapters.StopReason) *adapters.Summary {
	return &adapters.Summary{Terminal: adapters.StatusCompleted, StopReason: stop, ProviderStopReason: string(stop), Text: text}
}

var objSchema = json.RawMessage(`{"type":"object","required":["ok"]}`)

// TestScopes: the same answer, judged as a scenario's session and as one
// exchange, in the words each has always used.
func TestScopes(t *testing.T) {
	fenced := "```json\n{\"ok\":true}\n```"
	for _, c := range []struct {
		name   string
		in     validate.Input
		layer  validate.Layer
		status validate.Verdict
		detail string
	}{
		{"scenario fence", validate.Input{Outcome: validate.Outcome{HTTPStatus: 200, Final: final(fenced, adapters.StopFinal)}, Contract: validate.Contract{Mode: adapters.OutputJSONSchema}},
			validate.Parse, validate.Fail, "the JSON is wrapped in a markdown code fence; the contract asks for exactly one JSON object"},
		{"scenario skips after a failed parse", validate.Input{Outcome: validate.Outcome{HTTPStatus: 200, Final: final(fenced, adapters.StopFinal)}, Contract: validate.Contract{Mode: adapters.OutputJSONSchema}},
			validate.Domain, validate.Skip, "not judged: the parse layer failed"},
		{"exchange fence", validate.Input{Scope: validate.Exchange, Outcome: validate.Outcome{HTTPStatus: 200, Final: final(fenced, adapters.StopFinal)}, Contract: validate.Contract{RawSchema: objSchema}},
			validate.Schema, validate.Fail, "the JSON is wrapped in a markdown code fence, not one JSON object"},
		{"exchange tool stop", validate.Input{Scope: validate.Exchange, Outcome: validate.Outcome{HTTPStatus: 200, Final: final("", adapters.StopToolCall)}},
			validate.Protocol, validate.Pass, "one completed terminal (tool_call)"},
		{"scenario tool stop", validate.Input{Outcome: validate.Outcome{HTTPStatus: 200, Final: final("", adapters.StopToolCall)}},
			validate.Protocol, validate.Fail, "the last response asked for tools; there is no final answer"},
		{"exchange schema pass", validate.Input{Scope: validate.Exchange, Outcome: validate.Outcome{HTTPStatus: 200, Final: final(`{"ok":1}`, adapters.StopFinal)}, Contract: validate.Contract{RawSchema: objSchema}},
			validate.Schema, validate.Pass, "matches the request's output schema"},
		{"application domain", validate.Input{Scope: validate.Application, Outcome: validate.Outcome{HTTPStatus: 200, Final: final(`{"ok":1}`, adapters.StopFinal)}, Contract: validate.Contract{Mode: adapters.OutputJSONSchema}},
			validate.Domain, validate.Skip, "modelwire does not know the application's business rules"},
		{"domain checks", validate.Input{Outcome: validate.Outcome{HTTPStatus: 200, Final: final(`{"ok":1}`, adapters.StopFinal)}, Contract: validate.Contract{Mode: adapters.OutputJSONSchema},
			Domain: func(json.RawMessage) []validate.Check {
				return []validate.Check{{ID: "a", Pass: true}, {ID: "b", Detail: "no"}}
			}},
			validate.Domain, validate.Fail, "b: no"},
	} {
		layers, _ := validate.Judge(c.in)
		if len(layers) != len(validate.Layers) {
			t.Fatalf("%s: %d layers", c.name, len(layers))
		}
		for i, l := range layers {
			if l.Layer != validate.Layers[i] {
				t.Errorf("%s: layer %d is %s", c.name, i, l.Layer)
			}
		}
		got, _ := validate.Find(layers, c.layer)
		if got.Status != c.status || got.Detail != c.detail {
			t.Errorf("%s: %s %s %q, want %s %q", c.name, c.layer, got.Status, got.Detail, c.status, c.detail)
		}
	}
}

func TestParseObject(t *testing.T) {
	obj, problem := validate.ParseObject(" {\"a\": 1}\n", validate.Scenario)
	if problem != "" || string(obj) != `{"a":1}` {
		t.Errorf("%s %q", obj, problem)
	}
	if _, problem := validate.ParseObject(`{"a":1} and more`, validate.Exchange); problem != `text after the JSON object: "and more"` {
		t.Errorf("%q", problem)
	}
}
