package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/diff"
)

// proxiedRefund records the refund case as an application's traffic:
// `modelwire run` (the application, with its own tools) drives its
// three-turn loop through `modelwire proxy --upstream sim`, into db. It
// returns the proxied session's id, and the order call's id and result
// as the application ran it.
func proxiedRefund(t *testing.T, db, protocol string) (id, orderCall, orderResult string) {
	t.Helper()
	base, stop := startProxy(t, db)
	args := []string{"run", "--db", filepath.Join(t.TempDir(), "app.db"), "--approve", "auto", "--json", "--protocol", protocol}
	switch protocol {
	case "anthropic-messages":
		t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test")
		args = append(args, "--provider", "anthropic", "--base-url", base)
	default:
		args = append(args, "--provider", "compatible", "--base-url", base+"/v1")
	}
	code, out, errs := mw(t, args...)
	stop()
	if code != 0 {
		t.Fatalf("the application through the proxy: exit %d: %s", code, errs)
	}
	for _, l := range lines(t, out) {
		if l["type"] == "tool.result" && l["name"] == "get_order_line" {
			orderCall, orderResult = l["call_id"].(string), l["content"].(string)
		}
	}
	_, list, _ := mw(t, "sessions", "--db", db, "--json", "--protocol", protocol)
	ls := lines(t, list)
	if len(ls) != 1 || ls[0]["source"] != "proxy" || ls[0]["turns"] != json.Number("3") {
		t.Fatalf("want one proxied three-turn session, have %v", ls)
	}
	return ls[0]["id"].(string), orderCall, orderResult
}

// editedOrder writes the order result with one value changed.
func editedOrder(t *testing.T, result, from, to string) string {
	t.Helper()
	edited := strings.Replace(result, from, to, 1)
	if edited == result {
		t.Fatalf("the order result has no %s: %s", from, result)
	}
	file := filepath.Join(t.TempDir(), "order.json")
	if err := os.WriteFile(file, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// The case on an application's own traffic: a proxied refund
// session forked with the order's paid_cents set to 20000 re-sends the
// application's request with that result edited where it sits; the
// simulated model caps at 15000; diff names the changed result and the
// changed output fields and nothing else. Forked at turn 3 the answer is
// final; forked at turn 1 the answers propose the calls the parent made,
// so the parent's results (the edited one included) are fed back and the
// fork runs the whole loop again.
func TestForkAProxiedSession(t *testing.T) {
	for _, protocol := range []string{"openai-responses", "anthropic-messages", "openai-chat"} {
		t.Run(protocol, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "mw.db")
			parent, call, result := proxiedRefund(t, db, protocol)
			file := editedOrder(t, result, `"paid_cents":18000`, `"paid_cents":20000`)
			for _, turn := range []string{"3", "1"} {
				code, out, errs := mw(t, "fork", parent, "--db", db, "--turn", turn, "--tool-result", call+"="+file, "--approve", "auto", "--json")
				if code != 0 {
					t.Fatalf("fork --turn %s: exit %d: %s\n%s", turn, code, errs, out)
				}
				ls := lines(t, out)
				res := ls[len(ls)-1]
				output, _ := res["output"].(map[string]any)
				if res["type"] != "session.result" || output["max_refund_cents"] != json.Number("15000") || res["status"] != "done" {
					t.Fatalf("fork --turn %s ended %v", turn, res)
				}
				fed := 0
				for _, l := range ls {
					if l["type"] == "tool.result" {
						fed++
						if l["call_id"] == call && !strings.Contains(l["content"].(string), `"paid_cents":20000`) {
							t.Errorf("the order result fed back is %v, want the edited one", l["content"])
						}
					}
				}
				if want := map[string]int{"3": 0, "1": 3}[turn]; fed != want {
					t.Errorf("fork --turn %s fed back %d results, want %d (the parent's)", turn, fed, want)
				}
				fork := res["session_id"].(string)

				_, list, _ := mw(t, "sessions", "--db", db, "--json")
				for _, s := range lines(t, list) {
					if s["id"] == fork && (s["parent_id"] != parent || s["turns"] != json.Number("3")) {
						t.Errorf("fork listed with parent %v and %v turns, want %s and 3", s["parent_id"], s["turns"], parent)
					}
				}

				code, changes := diffJSON(t, db, parent, fork)
				if code != 1 {
					t.Errorf("diff exit %d, want 1", code)
				}
				var results []diff.Change
				outs := map[string][2]any{}
				for _, c := range changes {
					switch c.Kind {
					case diff.KindToolResult:
						results = append(results, c)
					case diff.KindOutput:
						outs[c.Path] = [2]any{c.A, c.B}
					case diff.KindUsage:
						// the answer's text changed, so its token count may
					default:
						t.Errorf("fork --turn %s: unexpected difference %+v", turn, c)
					}
				}
				if len(results) != 1 || results[0].CallID != call || results[0].Turn != 1 || !strings.HasSuffix(results[0].Path, "/paid_cents") ||
					results[0].A != 18000.0 || results[0].B != 20000.0 {
					t.Errorf("fork --turn %s: tool result changes %+v, want %s paid_cents 18000 → 20000 only", turn, results, call)
				}
				if outs["output/max_refund_cents"] != [2]any{13000.0, 15000.0} {
					t.Errorf("fork --turn %s: output changes %v, want max_refund_cents 13000 → 15000", turn, outs)
				}
				for p := range outs {
					if p == "output/evidence_ids" || p == "output/requested_refund_cents" || p == "output/order_id" {
						t.Errorf("output field %s changed; the edit does not touch it", p)
					}
				}
			}
		})
	}
}

// A fork whose answer proposes a call the parent never ran cannot go on:
// the application's tools are not modelwire's. It stops there with the
// proposal recorded, says how to go on with the application, and exits 1.
func TestForkAProxiedSessionStopsAtANewCall(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	parent, call, result := proxiedRefund(t, db, "openai-responses")
	file := editedOrder(t, result, `"category":"headphones"`, `"category":"speakers"`)
	code, out, errs := mw(t, "fork", parent, "--db", db, "--turn", "2", "--tool-result", call+"="+file, "--approve", "auto", "--json")
	if code != ExitFailed {
		t.Fatalf("fork: exit %d, want %d: %s", code, ExitFailed, errs)
	}
	ls := lines(t, out)
	res := ls[len(ls)-1]
	fork, _ := res["session_id"].(string)
	if res["status"] != "failed" || fork == "" {
		t.Fatalf("fork ended %v", res)
	}
	for _, want := range []string{"get_refund_policy", "speakers", "never ran", "modelwire serve --session " + fork} {
		if !strings.Contains(errs, want) {
			t.Errorf("the message does not say %q: %s", want, errs)
		}
	}
	for _, l := range ls {
		if l["type"] == "tool.result" || l["type"] == "tool.decision" {
			t.Errorf("the fork ran a call it had no result for: %v", l)
		}
	}
	_, replay, _ := mw(t, "replay", fork, "--db", db, "--json")
	proposed := 0
	for _, l := range lines(t, replay) {
		if ev, _ := l["event"].(map[string]any); ev["type"] == "tool.proposed" && l["turn"] == json.Number("2") {
			proposed++
		}
	}
	if proposed != 2 {
		t.Errorf("the fork recorded %d proposals at turn 2, want the answer's 2", proposed)
	}
}

// On an application's session, an edit that cannot be made is a one-line
// error and nothing is stored; --protocol is refused, since there are no
// sources to re-assemble, only the wire.
func TestForkAProxiedSessionBadInput(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mw.db")
	parent, _, _ := proxiedRefund(t, db, "openai-responses")
	file := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(file, []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--turn", "3", "--protocol", "anthropic-messages"}, "only its requests as sent"},
		{[]string{"--turn", "3", "--set", "body.no_such/x=1"}, `no member "no_such"`},
		{[]string{"--turn", "3", "--tool-result", "call_nope=" + file}, "call_nope"},
		{[]string{"--turn", "4"}, "turns 1 to 3"},
		{[]string{"--turn", "3", "--scenario", "refund"}, "application's"},
		{[]string{"--turn", "3", "--no-stream"}, "--set body.stream=false"},
	} {
		code, out, errs := mw(t, append([]string{"fork", parent, "--db", db, "--approve", "auto"}, c.args...)...)
		if code != ExitUsage || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, c.want) || out != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit 2 and one line saying %q", c.args, code, errs, out, c.want)
		}
	}
	_, list, _ := mw(t, "sessions", "--db", db, "--json")
	if n := len(lines(t, list)); n != 1 {
		t.Errorf("%d sessions after refused forks, want the parent alone", n)
	}
}
