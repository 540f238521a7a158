package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/store"
)

// The refund case is the chapter's case: what assemble prints must be the
// chapter's requests (13.6.3–13.6.6), byte for byte once compacted, so
// key order counts.

const chapterSeed = "../../shared/seeds/000_35d43773ac54a4e3.txt"

func chapterFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "chapter", name))
	if err != nil {
		t.Fatal(err)
	}
	// The excerpts must still be the chapter's text, where the chapter is
	// at hand (it is beside every checkout and in CI).
	if seed, err := os.ReadFile(chapterSeed); err == nil && !bytes.Contains(seed, bytes.TrimSpace(b)) {
		t.Fatalf("testdata/chapter/%s is no longer an excerpt of %s", name, chapterSeed)
	}
	return b
}

func compact(t *testing.T, b []byte) string {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return out.String()
}

// assembledBody is the body `assemble --json` prints, as raw bytes.
func assembledBody(t *testing.T, args ...string) []byte {
	t.Helper()
	code, out, errs := runMain(t, "", append([]string{"assemble", "--json", "--no-stream"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var a struct {
		Body json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatal(err)
	}
	return a.Body
}

// The chapter's first request expands only get_order_line and registers
// the ledger and policy tools "under the same contract"; 13.2.8 prints
// those two. With them added, the assembled turn 1 is the chapter's.
func TestTurnOneIsTheChaptersRequest(t *testing.T) {
	want := compact(t, chapterFile(t, "13.6.3-request.json"))
	ledger := compact(t, chapterFile(t, "13.2.8-ledger-tool.json"))
	policy := compact(t, chapterFile(t, "13.2.8-policy-tool.json"))
	firstTool := strings.Index(want, `],"tool_choice"`)
	want = want[:firstTool] + "," + ledger + "," + policy + want[firstTool:]
	want = strings.Replace(want, `"model":"<model-id>"`, `"model":"refund-model"`, 1)

	got := compact(t, assembledBody(t, "--protocol", "openai-responses", "--history", "full"))
	if got != want {
		t.Errorf("turn 1 differs from the chapter's request at byte %d:\n got …%s…\nwant …%s…", firstDiff(got, want), around(got, firstDiff(got, want)), around(want, firstDiff(got, want)))
	}

	// What run sends, and what the store keeps, is the same body.
	path := filepath.Join(t.TempDir(), "mw.db")
	if code, _, errs := runMain(t, "", "--db", path, "run", "--no-stream", "--approve", "auto", "--json"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	list, err := db.ListSessions(store.Filter{})
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions %v %v", list, err)
	}
	s, err := db.GetSession(list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if stored := compact(t, s.Attempts[0].RequestBody); stored != want {
		t.Errorf("the stored turn-1 body differs from the chapter's at byte %d:\n%s", firstDiff(stored, want), around(stored, firstDiff(stored, want)))
	}
}

func firstDiff(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func around(s string, i int) string {
	return s[max(0, i-80):min(len(s), i+80)]
}

// Turns 2 and 3 are turn 1 plus each response's output items and the
// results by call_id (13.6.6's request_2 and request_3); turn 3 keeps the
// tools and sends tool_choice none.
func TestLaterTurnsAreTheChaptersRequests(t *testing.T) {
	type item = map[string]any
	type body struct {
		Input      []item          `json:"input"`
		Tools      json.RawMessage `json:"tools"`
		ToolChoice any             `json:"tool_choice"`
		Parallel   *bool           `json:"parallel_tool_calls"`
		Text       json.RawMessage `json:"text"`
		MaxOut     int             `json:"max_output_tokens"`
	}
	read := func(turn string) body {
		var b body
		if err := json.Unmarshal(assembledBody(t, "--turn", turn), &b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	r1, r2, r3 := read("1"), read("2"), read("3")
	call := func(id, name, args string) item {
		return item{"type": "function_call", "id": "fc_" + id, "call_id": "call_" + id, "name": name, "arguments": args, "status": "completed"}
	}
	output := func(id, out string) item {
		return item{"type": "function_call_output", "call_id": "call_" + id, "output": out}
	}
	order := output("order", `{"status":"ok","evidence_id":"E-order","order_id":"O-2048","line_id":"L1","currency":"CNY","paid_cents":18000,"category":"headphones","received_at":"2026-10-15T12:00:00+08:00","reason":"quality_issue","quality_evidence":"missing","observed_at":"2026-10-20T10:00:01+08:00"}`)
	want2 := append(append([]item{}, r1.Input...), call("order", "get_order_line", `{"order_id":"O-2048","line_id":"L1"}`), order)
	want3 := append(append([]item{}, want2...),
		call("ledger", "get_refund_ledger", `{"order_id":"O-2048","line_id":"L1"}`),
		call("policy", "get_refund_policy", `{"category":"headphones","received_at":"2026-10-15T12:00:00+08:00","reason":"quality_issue"}`),
		output("ledger", `{"status":"ok","evidence_id":"E-ledger","snapshot":"L42","currency":"CNY","successful_refund_cents":3000,"pending_hold_cents":2000}`),
		output("policy", `{"status":"ok","evidence_id":"E-policy","version":"aftersale-v3","within_7_days":true,"quality_evidence_required":true}`))
	for _, c := range []struct {
		name      string
		got, want []item
	}{{"turn 2", r2.Input, want2}, {"turn 3", r3.Input, want3}} {
		g, _ := json.Marshal(c.got)
		w, _ := json.Marshal(c.want)
		if !bytes.Equal(g, w) {
			t.Errorf("%s input:\n got %s\nwant %s", c.name, g, w)
		}
	}
	for i, r := range []body{r1, r2} {
		if r.ToolChoice != "auto" {
			t.Errorf("turn %d tool_choice %v, want auto", i+1, r.ToolChoice)
		}
	}
	if r3.ToolChoice != "none" {
		t.Errorf("turn 3 tool_choice %v, want none (the evidence is complete)", r3.ToolChoice)
	}
	if !bytes.Equal(r3.Tools, r1.Tools) || !bytes.Equal(r3.Text, r1.Text) {
		t.Error("turn 3 must keep turn 1's tools and text.format")
	}
	if r3.Parallel == nil || !*r3.Parallel || r3.MaxOut != 1800 {
		t.Errorf("turn 3 parallel_tool_calls %v max_output_tokens %d, want true and 1800", r3.Parallel, r3.MaxOut)
	}
}

// Each protocol says "no more tools" in its own words on turn 3, keeping
// the tools (13.2.8's mapping; 13.6.6's runtime rule).
func TestTurnThreeForbidsToolsInEachProtocolsWords(t *testing.T) {
	for p, want := range map[string]string{
		"openai-responses":   `"tool_choice":"none"`,
		"openai-chat":        `"tool_choice":"none"`,
		"deepseek-chat":      `"tool_choice":"none"`,
		"anthropic-messages": `"tool_choice":{"type":"none"}`,
		"gemini":             `"toolConfig":{"functionCallingConfig":{"mode":"NONE"}}`,
	} {
		b := compact(t, assembledBody(t, "--protocol", p, "--turn", "3"))
		if !strings.Contains(b, want) {
			t.Errorf("%s turn 3: no %s in %s", p, want, b)
		}
		if !strings.Contains(b, `get_refund_policy`) {
			t.Errorf("%s turn 3 dropped its tools", p)
		}
		if p == "deepseek-chat" && !strings.Contains(b, `"response_format":{"type":"json_object"}`) {
			t.Errorf("deepseek turn 3 must use JSON mode: %s", b)
		}
	}
}

// The chapter's answer, on every protocol, streaming and not.
func TestRunEndsWithTheChaptersObject(t *testing.T) {
	const want = `{"order_id":"O-2048","line_id":"L1","decision":"needs_review","currency":"CNY","requested_refund_cents":15000,"max_refund_cents":13000,"issues":["requested_amount_exceeds_cap","quality_evidence_missing","unverified_history_amount_conflict"],"evidence_ids":["E-order","E-ledger","E-policy"],"reply_draft":"经核查，该商品目前资金维度可退上限为130元，低于本次申请的150元。申请仍需补充质量凭证，暂不能确认满足全部售后条件。以上为核查结果，未提交退款。"}`
	db := filepath.Join(t.TempDir(), "mw.db")
	for _, p := range []string{"openai-responses", "openai-chat", "anthropic-messages", "gemini", "deepseek-chat"} {
		for _, stream := range []string{"", "--no-stream"} {
			args := []string{"--db", db, "run", "--protocol", p, "--approve", "auto", "--json"}
			if stream != "" {
				args = append(args, stream)
			}
			code, out, errs := runMain(t, "", args...)
			if code != 0 {
				t.Errorf("%s %s: exit %d: %s", p, stream, code, errs)
				continue
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			var res struct {
				Output     json.RawMessage `json:"output"`
				Validation []struct{ Layer, Status string }
			}
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
				t.Fatal(err)
			}
			if got := compact(t, res.Output); got != want {
				t.Errorf("%s %s: final object\n got %s\nwant %s", p, stream, got, want)
			}
			for _, l := range res.Validation {
				if l.Status != "pass" {
					t.Errorf("%s %s: layer %s %s", p, stream, l.Layer, l.Status)
				}
			}
		}
	}
}
