package diff

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/jsonschema"
	"github.com/modelwire/modelwire/store"
)

func parse(t *testing.T, s string) any {
	t.Helper()
	v, err := jsonschema.ParseJSON([]byte(s))
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

func paths(cs []Change) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Op+" "+c.Path)
	}
	return out
}

func TestValuesIsSemantic(t *testing.T) {
	for _, c := range []struct {
		name, a, b string
		want       []string
	}{
		{"key order and whitespace", `{"a":1,"b":[1,2]}`, "{ \"b\": [1, 2],\n \"a\": 1 }", []string{}},
		{"numbers by value", `{"n":1.0}`, `{"n":1}`, []string{}},
		{"json inside a string", `{"output":"{\"paid_cents\":18000,\"x\":1}"}`, `{"output":"{\"x\":1, \"paid_cents\":20000}"}`,
			[]string{"changed output/paid_cents"}},
		{"array items by id", `{"input":[{"call_id":"a","v":1},{"call_id":"b","v":2}]}`, `{"input":[{"call_id":"b","v":3},{"call_id":"a","v":1}]}`,
			[]string{"changed input/[call_id=b]/v"}},
		{"tools by name", `{"tools":[{"name":"x","d":"1"},{"name":"y","d":"2"}]}`, `{"tools":[{"name":"y","d":"2"}]}`,
			[]string{"removed tools/[name=x]"}},
		{"arrays without ids by position", `[{"v":1},{"v":2},{"v":3}]`, `[{"v":1},{"v":5}]`, []string{"changed 1/v", "removed 2"}},
		{"lists of values by value", `{"issues":["cap","evidence","history"]}`, `{"issues":["evidence","new"]}`,
			[]string{"removed issues", "removed issues", "added issues"}},
		{"a list in another order", `["a","b"]`, `["b","a"]`, []string{"changed "}},
		{"added and removed members", `{"a":1}`, `{"b":1}`, []string{"removed a", "added b"}},
		{"a type change", `{"a":"1"}`, `{"a":1}`, []string{"changed a"}},
		{"a slash in a key", `{"a/b":1}`, `{"a/b":2}`, []string{"changed a~1b"}},
	} {
		got := paths(Values("", parse(t, c.a), parse(t, c.b), nil))
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// A value that became JSON null reads "null", not a dash that could be
// taken for "no value" (the refund answer's max_refund_cents does this
// when a source fails).
func TestTextShowsNull(t *testing.T) {
	cs := Values("", parse(t, `{"max_refund_cents":13000}`), parse(t, `{"max_refund_cents":null}`), nil)
	if len(cs) != 1 || cs[0].Op != OpChanged || Text(cs[0].A)+" → "+Text(cs[0].B) != "13000 → null" {
		t.Fatalf("changes %+v", cs)
	}
}

// A patch taken between a request and its edited copy applies to the
// same request at a later turn, where the history has grown.
func TestPatchAppliesToALaterTurn(t *testing.T) {
	turn1 := `{"model":"m","tools":[{"name":"x","description":"old"}],"messages":[{"role":"user","content":"hi"}]}`
	edited := `{"model":"m2","tools":[{"name":"x","description":"new"}],"messages":[{"role":"user","content":"hi"}]}`
	turn2 := `{"model":"m","tools":[{"name":"x","description":"old"}],"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"ok"}]}`
	ops := Patch(parse(t, turn1), parse(t, edited))
	if len(ops) != 2 {
		t.Fatalf("ops %+v, want model and the description", ops)
	}
	got, err := Apply([]byte(turn2), ops)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"m2","tools":[{"name":"x","description":"new"}],"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"ok"}]}`
	if !Equal(parse(t, string(got)), parse(t, want)) {
		t.Errorf("patched turn 2:\n%s\nwant\n%s", got, want)
	}
}

func TestApplyInsideAJSONString(t *testing.T) {
	body := `{"input":[{"type":"function_call_output","call_id":"c","output":"{\"paid_cents\":18000}"}]}`
	got, err := Apply([]byte(body), []Op{{Path: SplitPath("input/0/output/paid_cents"), Value: json.Number("20000")}})
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Input []struct {
			Output string `json:"output"`
		} `json:"input"`
	}
	if err := json.Unmarshal(got, &v); err != nil || v.Input[0].Output != `{"paid_cents":20000}` {
		t.Errorf("got %s (%v)", got, err)
	}
	for _, p := range []string{"input/3/output", "input/0/call_id/x", "nothing/here"} {
		if _, err := Apply([]byte(body), []Op{{Path: SplitPath(p), Value: "x"}}); err == nil {
			t.Errorf("setting %s: no error", p)
		}
	}
	if got := SplitPath("tools.0.description"); !reflect.DeepEqual(got, []string{"tools", "0", "description"}) {
		t.Errorf("dotted path split as %v", got)
	}
}

// Two runs never share the provider's ids: b's calls are paired with a's
// by name in call order, and b's ids read as a's in its requests, so
// only real differences remain.
func TestPairIDs(t *testing.T) {
	call := func(turn int, id, name string) store.Call {
		return store.Call{Turn: turn, CallID: id, Name: name, HasResult: true, Result: `{"ok":1}`}
	}
	ta := map[int]store.TurnRecord{1: {Turn: 1, Summary: adapters.Summary{ResponseID: "resp_a"}, Calls: []store.Call{call(1, "call_x", "get"), call(1, "call_y", "put")}}}
	tb := map[int]store.TurnRecord{1: {Turn: 1, Summary: adapters.Summary{ResponseID: "resp_b"}, Calls: []store.Call{call(1, "call_y2", "put"), call(1, "call_x2", "get")}}}
	m := pairIDs(ta, tb)
	if m["call_x2"] != "call_x" || m["call_y2"] != "call_y" || m["resp_b"] != "resp_a" {
		t.Errorf("pairs %v", m)
	}
	if cs := callChanges(1, ta[1], tb[1], m, nil); len(cs) != 0 {
		t.Errorf("paired calls differ: %+v", cs)
	}
	body := parse(t, `{"previous_response_id":"resp_b","input":[{"type":"function_call_output","call_id":"call_x2"}]}`)
	if got := renamed(body, m); !Equal(got, parse(t, `{"previous_response_id":"resp_a","input":[{"type":"function_call_output","call_id":"call_x"}]}`)) {
		t.Errorf("renamed %v", got)
	}
}
