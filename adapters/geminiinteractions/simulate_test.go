package geminiinteractions

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

var sim = New().(adapters.Simulated)

// The request checks, each with the API's status and error code.
func TestCheckRequestRejects(t *testing.T) {
	call := `{"type":"function_call","id":"ab12cd34","name":"get_order_line","arguments":{"order_id":"O-2048","line_id":"L1"}}`
	result := `{"type":"function_result","call_id":"ab12cd34","name":"get_order_line","result":"{}"}`
	user := `{"type":"user_input","content":[{"type":"text","text":"hi"}]}`
	for _, c := range []struct {
		name, path, body string
		status           int
		code, message    string
	}{
		{"a result answering no call", Path, `{"model":"m","input":[` + user + `,{"type":"function_result","call_id":"zz999999","result":"x"}]}`, 400, "invalid_request", "zz999999"},
		{"a call left unanswered", Path, `{"model":"m","input":[` + user + `,` + call + `]}`, 400, "invalid_request", "ab12cd34"},
		{"an unknown parameter", Path, `{"model":"m","input":"hi","contents":[]}`, 400, "parameter_unknown", "contents"},
		{"no model", Path, `{"input":"hi"}`, 400, "invalid_request", "model"},
		{"no input", Path, `{"model":"m"}`, 400, "invalid_request", "input"},
		{"not JSON", Path, `{"model":`, 400, "invalid_request", "JSON"},
		{"stream not a boolean", Path, `{"model":"m","input":"hi","stream":"yes"}`, 400, "invalid_request", "stream"},
		{"arguments not an object", Path, `{"model":"m","input":[` + user + `,{"type":"function_call","id":"ab12cd34","name":"f","arguments":"{}"},` + result + `]}`, 400, "invalid_request", "arguments"},
		{"temperature out of range", Path, `{"model":"m","input":"hi","generation_config":{"temperature":3}}`, 400, "invalid_request", "temperature"},
		{"steps and contents mixed", Path, `{"model":"m","input":[` + user + `,{"type":"text","text":"x"}]}`, 400, "invalid_request", "not both"},
		{"another path", "/v1beta/interactions/abc", `{}`, 404, "not_found", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, serr := sim.CheckRequest(http.MethodPost, c.path, http.Header{}, []byte(c.body))
			if serr == nil {
				t.Fatal("accepted")
			}
			e := gjson.ParseBytes(serr.Body).Get("error")
			if serr.Status != c.status || e.Get("code").String() != c.code || !strings.Contains(e.Get("message").String(), c.message) {
				t.Fatalf("%d %s", serr.Status, serr.Body)
			}
		})
	}
	// The same call answered, and a chained result (the server checks it
	// against the interaction it continues), pass.
	for _, body := range []string{
		`{"model":"m","input":[` + user + `,` + call + `,` + result + `]}`,
		`{"model":"m","previous_interaction_id":"v1_x","input":[{"type":"function_result","call_id":"zz999999","result":[{"type":"text","text":"ok"}]}]}`,
		`{"model":"m","input":"hi"}`,
		`{"model":"m","input":{"type":"text","text":"hi"}}`,
	} {
		in, serr := sim.CheckRequest(http.MethodPost, Path, http.Header{}, []byte(body))
		if serr != nil {
			t.Fatalf("%s: %s", body, serr.Body)
		}
		if strings.Contains(body, "zz999999") && (len(in.Results) != 1 || in.Results[0].Content != "ok") {
			t.Fatalf("chained result %+v", in.Results)
		}
	}
}

// The stream: named events whose data names its own event_type, one
// step.start/step.stop pair per step, interaction.completed without steps,
// then done/[DONE]; ids in the API's formats, fixed by the seed.
func TestStreamShape(t *testing.T) {
	turn := adapters.ModelTurn{Stop: adapters.StopToolCall, Items: []adapters.OutputItem{
		{Kind: adapters.KindReasoning, Text: "台账和政策互不依赖，可以并行查询。"},
		{Kind: adapters.KindToolCall, Name: "get_refund_ledger", Arguments: []byte(`{"order_id":"O-2048","line_id":"L1"}`)},
		{Kind: adapters.KindToolCall, Name: "get_refund_policy", Arguments: []byte(`{"policy_id":"aftersale-v3"}`)},
	}}
	o := adapters.ResponseOptions{Model: "gemini-3-flash-preview", Seed: 7}
	evs := sim.StreamEvents(turn, o)
	last := evs[len(evs)-1]
	if last.Event != "done" || last.Data != "[DONE]" {
		t.Fatalf("last event %+v", last)
	}
	starts, stops := 0, 0
	for _, e := range evs[:len(evs)-1] {
		if got := gjson.Get(e.Data, "event_type").String(); got != e.Event {
			t.Fatalf("event %s has event_type %s", e.Event, got)
		}
		switch e.Event {
		case "step.start":
			starts++
		case "step.stop":
			stops++
		case "interaction.completed":
			c := gjson.Get(e.Data, "interaction")
			if c.Get("steps").Exists() || c.Get("status").String() != "requires_action" || c.Get("id").String() != sim.ResponseID(o) {
				t.Fatalf("completed %s", e.Data)
			}
		}
	}
	if starts != 3 || stops != 3 {
		t.Fatalf("%d starts, %d stops", starts, stops)
	}
	if !regexp.MustCompile(`^v1_[A-Za-z0-9_-]{32}$`).MatchString(sim.ResponseID(o)) ||
		sim.ResponseID(o) == sim.ResponseID(adapters.ResponseOptions{Seed: 8}) {
		t.Fatalf("interaction id %q", sim.ResponseID(o))
	}
	body := gjson.ParseBytes(sim.Body(turn, o))
	_, s := adapterstest.Decode(t, New(), adapterstest.SSE(evs, "\n"))
	for i, c := range s.ToolCalls {
		id := body.Get("steps." + string(rune('1'+i)) + ".id").String()
		if c.CallID != id || !regexp.MustCompile(`^[a-z0-9]{8}$`).MatchString(id) {
			t.Fatalf("call %d: stream id %q, body id %q", i, c.CallID, id)
		}
	}
}

// Refusal and truncation become the interaction's status.
func TestStatuses(t *testing.T) {
	for _, c := range []struct {
		stop   adapters.StopReason
		items  []adapters.OutputItem
		status string
		want   adapters.Status
	}{
		{adapters.StopRefusal, []adapters.OutputItem{{Kind: adapters.KindRefusal, Text: "no"}}, "failed", adapters.StatusRefused},
		{adapters.StopTruncated, []adapters.OutputItem{{Kind: adapters.KindMessage, Text: "half"}}, "incomplete", adapters.StatusIncomplete},
		{adapters.StopFinal, []adapters.OutputItem{{Kind: adapters.KindMessage, Text: "done"}}, "completed", adapters.StatusCompleted},
	} {
		turn := adapters.ModelTurn{Items: c.items, Stop: c.stop}
		b := sim.Body(turn, adapters.ResponseOptions{Seed: 1})
		if got := gjson.GetBytes(b, "status").String(); got != c.status {
			t.Errorf("%s: status %s", c.stop, got)
		}
		_, s := adapterstest.Decode(t, New(), adapterstest.SSE(sim.StreamEvents(turn, adapters.ResponseOptions{Seed: 1}), "\n"))
		if s.Terminal != c.want {
			t.Errorf("%s: decoded %s", c.stop, s.Terminal)
		}
	}
}

// Errors in the API's shape, read back by our own DecodeError.
func TestErrorResponses(t *testing.T) {
	for _, c := range []struct {
		status int
		kind   string
		want   int
		code   string
	}{
		{429, "rate_limit", 429, "rate_limit_exceeded"},
		{500, "server_error", 500, "api_error"},
		{529, "overloaded_error", 503, "service_unavailable"},
		{400, "invalid_request_error", 400, "invalid_request"},
	} {
		e := sim.ErrorResponse(c.status, c.kind, "m")
		got := New().DecodeError(e.Status, e.Header, e.Body)
		if e.Status != c.want || got.Type != c.code || got.Message == "" {
			t.Errorf("%s: %d %+v", c.kind, e.Status, got)
		}
	}
	evs := sim.ErrorEvent("overloaded_error", "Overloaded")
	if len(evs) != 2 || evs[0].Event != "error" || evs[1].Data != "[DONE]" {
		t.Fatalf("%+v", evs)
	}
}

// What the request lets the model do, read into the Inbound the simulated
// model obeys.
func TestCheckRequestReadsChoices(t *testing.T) {
	for _, c := range []struct {
		gc      string
		choice  adapters.ToolChoice
		allowed string
		reason  bool
	}{
		{`{"tool_choice":"any"}`, adapters.ToolChoice{Mode: adapters.ToolChoiceRequired}, "", false},
		{`{"tool_choice":"none","thinking_summaries":"auto"}`, adapters.ToolChoice{Mode: adapters.ToolChoiceNone}, "", true},
		{`{"tool_choice":{"allowed_tools":{"mode":"any","tools":["f"]}}}`, adapters.ToolChoice{Mode: adapters.ToolChoiceNamed, Name: "f"}, "f", false},
		{`{"tool_choice":{"allowed_tools":{"mode":"auto","tools":["f","g"]}}}`, adapters.ToolChoice{Mode: adapters.ToolChoiceAuto}, "f,g", false},
		{`{}`, adapters.ToolChoice{}, "", false},
	} {
		in, serr := sim.CheckRequest(http.MethodPost, Path, http.Header{}, []byte(`{"model":"m","input":"hi","generation_config":`+c.gc+`}`))
		if serr != nil {
			t.Fatalf("%s: %s", c.gc, serr.Body)
		}
		if in.Choice != c.choice || strings.Join(in.Allowed, ",") != c.allowed || in.Reasoning != c.reason || in.Serial {
			t.Errorf("%s: %+v", c.gc, in)
		}
	}
	if _, serr := sim.CheckRequest(http.MethodPost, Path, http.Header{}, []byte(`{"model":"m","input":"hi","generation_config":{"tool_choice":"required"}}`)); serr == nil {
		t.Errorf("tool_choice required (an OpenAI word) accepted")
	}
}
