package geminiinteractions

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// refundIDs are call and interaction ids in the API's formats.
var refundIDs = adapterstest.IDs{
	Call:     func(turn, i int) string { return fmt.Sprintf("c%d%dabcde", turn, i) },
	Response: func(turn int) string { return fmt.Sprintf("v1_turn%d", turn) },
}

func encode(t *testing.T, turn int, chained, stream bool) (*adapters.HTTPRequest, gjson.Result) {
	t.Helper()
	req := adapterstest.RefundRequest(turn, refundIDs, stream)
	if chained {
		req.History = adapters.HistoryPreviousResponse
		yes := true
		req.Store = &yes
	}
	hr, err := New().Encode(req, adapters.ProviderSim)
	if err != nil {
		t.Fatal(err)
	}
	return hr, gjson.ParseBytes(hr.Body)
}

func fieldOf(hr *adapters.HTTPRequest, source string) adapters.FieldMapping {
	for _, m := range hr.Map {
		if m.Source == source {
			return m
		}
	}
	return adapters.FieldMapping{}
}

// Where each refund source lands on turn 1, and the request's settings.
func TestEncodeTurn1(t *testing.T) {
	hr, b := encode(t, 1, false, true)
	if hr.Method != "POST" || hr.Path != "/v1beta/interactions" || hr.Headers["Api-Revision"] != "2026-05-20" {
		t.Fatalf("%s %s %v", hr.Method, hr.Path, hr.Headers)
	}
	src := adapterstest.RefundSources()
	if got := b.Get("system_instruction").String(); got != src[0].Text+"\n\n"+src[1].Text {
		t.Fatalf("system_instruction %q", got)
	}
	for source, field := range map[string]string{
		"system-rules": "system_instruction", "skill:refund_assessment@1.2": "system_instruction",
		"task": "input[0].content[0].text", "knowledge:KB-guide-9": "input[0].content[2].text",
		"workspace:data-contract": "input[0].content[5].text", "tool:get_refund_policy": "tools[2]",
		"output_schema": "response_format.schema",
	} {
		if m := fieldOf(hr, source); m.Field != field {
			t.Errorf("%s → %q, want %q", source, m.Field, field)
		}
	}
	if !strings.Contains(fieldOf(hr, "skill:refund_assessment@1.2").Note, "no developer role") {
		t.Errorf("the developer source's degradation is not noted")
	}
	if b.Get("input.0.type").String() != "user_input" || b.Get("input.0.content.3.text").String() != adapters.SourceText(src[5]) {
		t.Errorf("input[0] %s", b.Get("input.0").Raw)
	}
	if b.Get("tools.0.type").String() != "function" || b.Get("tools.0.parameters.additionalProperties").Raw != "false" {
		t.Errorf("tools %s", b.Get("tools").Raw)
	}
	if b.Get("response_format.type").String() != "text" || b.Get("response_format.mime_type").String() != "application/json" ||
		!jsonEqual(b.Get("response_format.schema").Raw, string(adapterstest.RefundSchema())) {
		t.Errorf("response_format %s", b.Get("response_format").Raw)
	}
	if b.Get("generation_config.tool_choice").String() != "auto" ||
		b.Get("generation_config.max_output_tokens").Int() != int64(adapterstest.RefundRequest(1, refundIDs, true).Limits.MaxOutputTokens) {
		t.Errorf("generation_config %s", b.Get("generation_config").Raw)
	}
	if !b.Get("stream").Bool() || b.Get("store").Exists() || b.Get("previous_interaction_id").Exists() {
		t.Errorf("stream/store/previous: %s", hr.Body)
	}
	if len(hr.Degradations) == 0 {
		t.Errorf("strict schemas and the parallel switch must be recorded as degradations")
	}
	_, nb := encode(t, 1, false, false)
	if nb.Get("stream").Exists() {
		t.Errorf("a non-streaming request sends stream")
	}
}

// Full history replays each turn's calls as function_call steps (arguments
// as objects) followed by one function_result per call, by call_id.
func TestEncodeTurn3Full(t *testing.T) {
	_, b := encode(t, 3, false, true)
	var types []string
	for _, s := range b.Get("input").Array() {
		types = append(types, s.Get("type").String())
	}
	want := "user_input,function_call,function_result,function_call,function_call,function_result,function_result"
	if strings.Join(types, ",") != want {
		t.Fatalf("input steps %v", types)
	}
	if b.Get("input.1.arguments.order_id").String() != "O-2048" || b.Get("input.2.call_id").String() != "c10abcde" ||
		b.Get("input.2.result").String() != adapterstest.RefundTurn1[0].Result || b.Get("input.6.call_id").String() != "c21abcde" {
		t.Fatalf("input %s", b.Get("input").Raw)
	}
}

// Chained on previous_interaction_id: only the last turn's results go, the
// user sources are carried by the server; settings are sent again.
func TestEncodeTurn3Chained(t *testing.T) {
	hr, b := encode(t, 3, true, false)
	if b.Get("previous_interaction_id").String() != "v1_turn2" || !b.Get("store").Bool() {
		t.Fatalf("%s", hr.Body)
	}
	if b.Get("input.#").Int() != 2 || b.Get("input.0.type").String() != "function_result" || b.Get("input.1.call_id").String() != "c21abcde" {
		t.Fatalf("input %s", b.Get("input").Raw)
	}
	if m := fieldOf(hr, "task"); m.Field != "previous_interaction_id" || !strings.Contains(m.Note, "v1_turn2") {
		t.Fatalf("task → %+v", m)
	}
	if !b.Get("system_instruction").Exists() || b.Get("tools.#").Int() != 3 || !b.Get("response_format").Exists() {
		t.Fatalf("settings not re-sent: %s", hr.Body)
	}
}

func TestEncodeRefusesWhatCannotTravel(t *testing.T) {
	req := adapterstest.RefundRequest(2, refundIDs, true)
	req.History = adapters.HistoryPreviousResponse
	no := false
	req.Store = &no
	if _, err := New().Encode(req, adapters.ProviderSim); err == nil || !strings.Contains(err.Error(), "store is false") {
		t.Errorf("chaining with store false: %v", err)
	}
	req = adapterstest.RefundRequest(2, refundIDs, true)
	req.Turns[0].Results[0].CallID = "nope"
	if _, err := New().Encode(req, adapters.ProviderSim); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("a result for a call the turn does not make: %v", err)
	}
	req = adapterstest.RefundRequest(2, refundIDs, true)
	req.Turns[0].Items[0].Arguments = json.RawMessage(`"{\"order_id\":"`)
	if _, err := New().Encode(req, adapters.ProviderSim); err == nil {
		t.Errorf("malformed arguments replayed as a function_call")
	}
	req = adapterstest.RefundRequest(1, refundIDs, true)
	req.Choice = adapters.ToolChoice{Mode: adapters.ToolChoiceNamed, Name: "get_order_line"}
	_, b := encodeReq(t, req)
	if b.Get("generation_config.tool_choice.allowed_tools.mode").String() != "any" || b.Get("generation_config.tool_choice.allowed_tools.tools.0").String() != "get_order_line" {
		t.Errorf("named choice %s", b.Get("generation_config").Raw)
	}
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

func encodeReq(t *testing.T, req *adapters.Request) (*adapters.HTTPRequest, gjson.Result) {
	t.Helper()
	hr, err := New().Encode(req, adapters.ProviderSim)
	if err != nil {
		t.Fatal(err)
	}
	return hr, gjson.ParseBytes(hr.Body)
}

// What the encoder sends, the simulator's request check accepts and reads
// back: model turns, the results with their names, the tools, the chain.
func TestSimulatorReadsWhatWeSend(t *testing.T) {
	for _, chained := range []bool{false, true} {
		for turn := 1; turn <= 3; turn++ {
			hr, _ := encode(t, turn, chained, turn%2 == 1)
			in, serr := New().(adapters.Simulated).CheckRequest(hr.Method, hr.Path, http.Header{}, hr.Body)
			if serr != nil {
				t.Fatalf("turn %d chained=%v: %s", turn, chained, serr.Body)
			}
			// Full history carries every result so far; a chain only
			// the last turn's.
			wantTurns, wantResults := turn-1, []int{0, 1, 3}[turn-1]
			prev := ""
			if chained && turn > 1 {
				wantTurns, wantResults, prev = 0, turn-1, fmt.Sprintf("v1_turn%d", turn-1)
			}
			if in.ModelTurns != wantTurns || len(in.Results) != wantResults || in.PreviousResponseID != prev ||
				in.Stream != (turn%2 == 1) || in.Model != "refund-model" || len(in.Tools) != 3 ||
				in.MaxOutputTokens != adapterstest.RefundRequest(turn, refundIDs, true).Limits.MaxOutputTokens || in.Choice.Mode != adapters.ToolChoiceAuto {
				t.Fatalf("turn %d chained=%v: %+v", turn, chained, in)
			}
			for _, r := range in.Results {
				if r.Name == "" || r.Content == "" {
					t.Fatalf("turn %d: result without name or content %+v", turn, r)
				}
			}
		}
	}
}

// TestEncodeMapsCarriedHistory: turn 3's map names each carried call and
// result by turn and call id at the step that holds it; chained, the
// earlier ones are kept by the server and only turn 2's results are sent.
func TestEncodeMapsCarriedHistory(t *testing.T) {
	hr, b := encode(t, 3, false, true)
	var got []string
	for _, m := range hr.Map {
		if !strings.HasPrefix(m.Source, "history:turn") {
			continue
		}
		st := b.Get(strings.NewReplacer("[", ".", "]", "").Replace(m.Field))
		id := st.Get("id").String()
		if st.Get("type").String() == "function_result" {
			id = st.Get("call_id").String()
		}
		if !strings.HasSuffix(m.Source, " "+id) || m.Trust != adapters.TrustVerified {
			t.Errorf("%s → %s holds %s", m.Source, m.Field, st.Raw)
		}
		got = append(got, m.Source+" "+m.Field+" "+st.Get("type").String())
	}
	want := []string{
		"history:turn1 c10abcde input[1] function_call", "history:turn1 c10abcde input[2] function_result",
		"history:turn2 c20abcde input[3] function_call", "history:turn2 c21abcde input[4] function_call",
		"history:turn2 c20abcde input[5] function_result", "history:turn2 c21abcde input[6] function_result",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("carried:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	hr, _ = encode(t, 3, true, true)
	sent, kept := 0, 0
	for _, m := range hr.Map {
		switch {
		case !strings.HasPrefix(m.Source, "history:turn"):
		case m.Field == "previous_interaction_id":
			kept++
		case strings.HasPrefix(m.Source, "history:turn2 ") && strings.HasPrefix(m.Note, "function_result "):
			sent++
		default:
			t.Errorf("chained: %s → %s", m.Source, m.Field)
		}
	}
	if sent != 2 || kept != 4 {
		t.Errorf("chained: %d results sent, %d items kept by the server; want 2 and 4", sent, kept)
	}
}
