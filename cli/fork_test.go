package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/diff"
)

// lines reads JSON lines.
func lines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var ls []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var m map[string]any
		d := json.NewDecoder(strings.NewReader(sc.Text()))
		d.UseNumber()
		if err := d.Decode(&m); err != nil {
			t.Fatalf("stdout line is not JSON: %q", sc.Text())
		}
		ls = append(ls, m)
	}
	return ls
}

// refundRun runs the refund case into db and returns its session id and
// the get_order_line result it observed, the call as TURN:CALL_ID.
func refundRun(t *testing.T, db string, args ...string) (id, orderCall, orderResult string) {
	t.Helper()
	code, out, errs := mw(t, append([]string{"run", "--db", db, "--approve", "auto", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	for _, l := range lines(t, out) {
		if l["type"] == "tool.result" && l["name"] == "get_order_line" {
			orderCall, orderResult = fmt.Sprintf("%v:%s", l["turn"], l["call_id"]), l["content"].(string)
		}
		if l["type"] == "session.result" {
			id = l["session_id"].(string)
		}
	}
	if id == "" || orderCall == "" {
		t.Fatalf("no session id or order result in:\n%s", out)
	}
	return id, orderCall, orderResult
}

func diffJSON(t *testing.T, db, a, b string) (int, []diff.Change) {
	t.Helper()
	code, out, errs := mw(t, "diff", "--db", db, a, b, "--json")
	if code != 0 && code != 1 {
		t.Fatalf("diff: exit %d: %s", code, errs)
	}
	var cs []diff.Change
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var c diff.Change
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatalf("diff line is not a change: %q", l)
		}
		cs = append(cs, c)
	}
	return code, cs
}

// The case: fork the refund case at turn 3 with the order's
// paid_cents set to 20000; the simulated model computes the cap from the
// results it is sent, so the fork's cap is 20000 − 3000 − 2000 = 15000,
// every layer passes (the domain check computes the cap from the fork's
// observations), and diff names the changed tool result and the changed
// output fields — and nothing the edit did not change.
func TestForkAtTurnThreeChangesTheCap(t *testing.T) {
	for _, protocol := range []string{"openai-responses", "anthropic-messages", "gemini"} {
		t.Run(protocol, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "mw.db")
			parent, call, result := refundRun(t, db, "--protocol", protocol)
			edited := strings.Replace(result, `"paid_cents":18000`, `"paid_cents":20000`, 1)
			if edited == result {
				t.Fatalf("the order result has no paid_cents 18000: %s", result)
			}
			file := filepath.Join(dir, "order.json")
			if err := os.WriteFile(file, []byte(edited), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errs := mw(t, "fork", parent, "--db", db, "--turn", "3", "--tool-result", call+"="+file, "--approve", "auto", "--json")
			if code != 0 {
				t.Fatalf("fork: exit %d: %s\n%s", code, errs, out)
			}
			ls := lines(t, out)
			res := ls[len(ls)-1]
			if res["type"] != "session.result" {
				t.Fatalf("last line %v", res)
			}
			output := res["output"].(map[string]any)
			if output["max_refund_cents"] != json.Number("15000") {
				t.Errorf("fork's cap %v, want 15000", output["max_refund_cents"])
			}
			for _, l := range ls {
				if l["turn"] != nil && l["turn"] != json.Number("3") {
					t.Errorf("the fork sent turn %v; it inherits turns 1 and 2", l["turn"])
					break
				}
			}
			fork := res["session_id"].(string)

			// The fork is stored whole, under its parent.
			_, list, _ := mw(t, "sessions", "--db", db, "--json")
			for _, s := range lines(t, list) {
				if s["id"] == fork && (s["parent_id"] != parent || s["turns"] != json.Number("3")) {
					t.Errorf("fork listed with parent %v and %v turns, want %s and 3", s["parent_id"], s["turns"], parent)
				}
			}

			// The edited result finds the fork by content, and only it.
			_, found, _ := mw(t, "sessions", "--db", db, "--json", "--content", `paid_cents":20000`)
			if ls := lines(t, found); len(ls) != 1 || ls[0]["id"] != fork {
				t.Errorf("sessions --content with the edited result listed %v, want only the fork %s", ls, fork)
			}

			code, changes := diffJSON(t, db, parent, fork)
			if code != 1 {
				t.Errorf("diff exit %d, want 1 (they differ)", code)
			}
			var results, outputs []diff.Change
			for _, c := range changes {
				switch c.Kind {
				case diff.KindToolResult:
					results = append(results, c)
				case diff.KindOutput:
					outputs = append(outputs, c)
				case diff.KindUsage:
					// the answer's text changed, so its token count may
				default:
					t.Errorf("unexpected difference %+v", c)
				}
			}
			if len(results) != 1 || fmt.Sprintf("%d:%s", results[0].Turn, results[0].CallID) != call || !strings.HasSuffix(results[0].Path, "/paid_cents") ||
				results[0].A != 18000.0 || results[0].B != 20000.0 {
				t.Errorf("tool result changes %+v, want %s paid_cents 18000 → 20000 only", results, call)
			}
			outs := map[string][2]any{}
			for _, c := range outputs {
				outs[c.Path] = [2]any{c.A, c.B}
			}
			if outs["output/max_refund_cents"] != [2]any{13000.0, 15000.0} {
				t.Errorf("output changes %v, want max_refund_cents 13000 → 15000", outs)
			}
			for p := range outs {
				if p == "output/evidence_ids" || p == "output/requested_refund_cents" || p == "output/order_id" {
					t.Errorf("output field %s changed; the edit does not touch it", p)
				}
			}

			// The table lists the fork right under its parent.
			_, table, _ := mw(t, "sessions", "--db", db)
			rows := strings.Split(table, "\n")
			for i, r := range rows {
				if strings.HasPrefix(r, parent) && (i+1 >= len(rows) || !strings.HasPrefix(rows[i+1], "└ "+fork)) {
					t.Errorf("the fork is not listed under its parent:\n%s", table)
				}
			}

			if code, changes := diffJSON(t, db, parent, parent); code != 0 || len(changes) != 0 {
				t.Errorf("a session against itself: exit %d, %v", code, changes)
			}
		})
	}
}

// --set edits every request the fork sends (here a tool description, so
// each turn's request differs at that path and nowhere else), and a fork
// may change the protocol: the same sources re-assembled.
func TestForkSetAndProtocol(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	parent, _, _ := refundRun(t, db, "--protocol", "openai-chat")
	code, out, errs := mw(t, "fork", parent, "--db", db, "--turn", "1", "--set", `body.tools/0/function/description="Look up one order line."`, "--approve", "auto")
	if code != 0 {
		t.Fatalf("fork --set: exit %d: %s\n%s", code, errs, out)
	}
	if !strings.Contains(out, "set body.tools/0/function/description=") {
		t.Errorf("the fork does not say what it set:\n%s", out)
	}
	fork := strings.Fields(out[strings.LastIndex(out, "\nsession ")+1:])[1]
	fork = strings.TrimSuffix(fork, ":")
	_, changes := diffJSON(t, db, parent, fork)
	turns := map[int]bool{}
	for _, c := range changes {
		if c.Kind == diff.KindUsage {
			continue
		}
		if c.Kind != diff.KindRequest || !strings.HasSuffix(c.Path, "/body/tools/0/function/description") || c.B != "Look up one order line." {
			t.Errorf("unexpected difference %+v", c)
		}
		turns[c.Turn] = true
	}
	if len(turns) != 3 {
		t.Errorf("the edited description differs in turns %v, want all three", turns)
	}

	code, out, errs = mw(t, "fork", parent, "--db", db, "--turn", "1", "--protocol", "anthropic-messages", "--approve", "auto", "--json")
	if code != 0 {
		t.Fatalf("fork --protocol: exit %d: %s", code, errs)
	}
	ls := lines(t, out)
	fork = ls[len(ls)-1]["session_id"].(string)
	_, changes = diffJSON(t, db, parent, fork)
	if len(changes) == 0 || changes[0].Kind != diff.KindSession || changes[0].Path != "protocol" || changes[0].B != "anthropic-messages" {
		t.Errorf("first difference %+v, want the protocol", changes[:min(1, len(changes))])
	}
}

func TestForkBadInput(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "mw.db")
	parent, _, _ := refundRun(t, db)
	file := filepath.Join(dir, "r.json")
	_ = os.WriteFile(file, []byte(`{}`), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{}, "--turn"},
		{[]string{"--turn", "4"}, "has turns 1 to 3"},
		{[]string{"--turn", "3", "--tool-result", "call_nope=" + file}, "call_nope: no such call before turn 3"},
		{[]string{"--turn", "1", "--tool-result", "call_order=" + file}, "no tool results before turn 1"},
		{[]string{"--turn", "3", "--tool-result", "2:call_order=" + file}, "turn 2 has no call call_order"},
		{[]string{"--turn", "1", "--set", "body.tools/9/name=\"x\""}, "no item 9"},
		{[]string{"--turn", "1", "--set", "body.model=gpt"}, "is not JSON"},
		{[]string{"--turn", "1", "--set", "model=\"x\""}, "want body.PATH=JSON"},
		{[]string{"--turn", "1", "--body", filepath.Join(dir, "none.json")}, "--body"},
	} {
		code, out, errs := mw(t, append([]string{"fork", parent, "--db", db, "--approve", "auto"}, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("fork %v: exit %d, stderr %q, want 2 and one line with %q (stdout %q)", c.args, code, errs, c.want, out)
		}
	}
	if code, _, errs := mw(t, "diff", "--db", db, parent, "zzzzzz"); code != 2 || !strings.Contains(errs, "zzzzzz") {
		t.Errorf("diff with an unknown id: exit %d, %q", code, errs)
	}
}

// replayLines is a session's replay --json without the offsets (a HAR keeps
// no time per event).
func replayLines(t *testing.T, db, id string) []string {
	t.Helper()
	code, out, errs := mw(t, "replay", id, "--db", db, "--json")
	if code != 0 {
		t.Fatalf("replay: exit %d: %s", code, errs)
	}
	var tl []string
	for _, l := range lines(t, out) {
		delete(l, "offset_ms")
		b, _ := json.Marshal(l)
		tl = append(tl, string(b))
	}
	return tl
}

// A three-turn session exported as HAR imports as one session with the
// same timeline: every raw and canonical event, and the decisions, tool
// results and verdicts, which travel in the entries' _modelwire; and the
// imported session forks like the original.
func TestHARRoundTripOfAThreeTurnSession(t *testing.T) {
	for _, protocol := range []string{"openai-responses", "anthropic-messages", "gemini"} {
		t.Run(protocol, func(t *testing.T) {
			dir := t.TempDir()
			db1, db2, har := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db"), filepath.Join(dir, "s.har")
			id, _, _ := refundRun(t, db1, "--protocol", protocol)
			if code, _, errs := mw(t, "export", id, "--db", db1, "--format", "har", "-o", har); code != 0 {
				t.Fatalf("export: %s", errs)
			}
			if code, _, errs := mw(t, "import", har, "--db", db2); code != 0 {
				t.Fatalf("import: %s", errs)
			}
			_, list, _ := mw(t, "sessions", "--db", db2, "--json")
			ss := lines(t, list)
			if len(ss) != 1 || ss[0]["turns"] != json.Number("3") || ss[0]["status"] != "done" || ss[0]["scenario"] != "refund" {
				t.Fatalf("imported %v, want one done refund session of 3 turns", ss)
			}
			a, b := replayLines(t, db1, id), replayLines(t, db2, ss[0]["id"].(string))
			if len(a) != len(b) {
				t.Fatalf("imported timeline has %d entries, want %d", len(b), len(a))
			}
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("entry %d differs:\n%s\n%s", i+1, a[i], b[i])
				}
			}
			if code, _, errs := mw(t, "fork", ss[0]["id"].(string), "--db", db2, "--turn", "2", "--approve", "auto"); code != 0 {
				t.Errorf("forking the imported session: exit %d: %s", code, errs)
			}
		})
	}
}

// run --repeat K stores K sessions and ends with the tally of the set.
func TestRunRepeat(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	code, out, errs := mw(t, "run", "--db", db, "--repeat", "2", "--approve", "auto", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	ls := lines(t, out)
	sum := ls[len(ls)-1]
	if sum["type"] != "repeat.summary" || len(sum["sessions"].([]any)) != 2 {
		t.Fatalf("last line %v, want the summary of 2 sessions", sum)
	}
	results := 0
	for _, l := range ls {
		if l["type"] == "session.result" {
			results++
		}
	}
	found := false
	for _, f := range sum["fields"].([]any) {
		f := f.(map[string]any)
		if f["path"] == "output/max_refund_cents" {
			found = true
			vs := f["values"].([]any)
			if len(vs) != 1 || vs[0].(map[string]any)["value"] != json.Number("13000") || vs[0].(map[string]any)["n"] != json.Number("2") {
				t.Errorf("cap tally %v, want 13000 twice", vs)
			}
		}
	}
	if results != 2 || !found {
		t.Errorf("%d session results, cap tallied %v", results, found)
	}
	if code, _, errs := mw(t, "run", "--db", db, "--repeat", "2"); code != 2 || !strings.Contains(errs, "--approve auto") {
		t.Errorf("--repeat with manual approval: exit %d, %q", code, errs)
	}
	if code, _, _ := mw(t, "run", "--db", db, "--repeat", "0", "--approve", "auto"); code != 2 {
		t.Errorf("--repeat 0: exit %d", code)
	}
}

// A fork that changes nothing is its parent again, from any turn —
// including the regeneration turn of a session whose answer failed: the
// inherited history carries the regeneration's message, and the fork makes
// no second one.
func TestForkWithoutEditsIsTheParent(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	code, out, _ := mw(t, "run", "--db", db, "--scenario", "refund/fenced", "--approve", "auto", "--json")
	ls := lines(t, out)
	parent := ls[len(ls)-1]["session_id"].(string)
	if code != 1 || ls[len(ls)-1]["regenerated"] != true {
		t.Fatalf("the fenced case should fail after its regeneration: exit %d", code)
	}
	for _, turn := range []string{"1", "3", "4"} {
		code, out, errs := mw(t, "fork", parent, "--db", db, "--turn", turn, "--approve", "auto", "--json")
		if code != 1 {
			t.Fatalf("fork at %s: exit %d %s", turn, code, errs)
		}
		ls := lines(t, out)
		fork := ls[len(ls)-1]["session_id"].(string)
		if code, changes := diffJSON(t, db, parent, fork); code != 0 {
			t.Errorf("fork at turn %s differs from its parent: %+v", turn, changes)
		}
	}
}
