package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// modelwire import takes a batch's files in any order, known by content:
// one session per custom_id, titled with the batch's id and status; a bad
// file is exit 2 with one line naming file and line, nothing stored.
func TestImportBatchFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	req := func(id string) string {
		return `{"custom_id":"` + id + `","method":"POST","url":"/v1/responses","body":{"model":"gpt-4.1-mini","input":"hi ` + id + `"}}`
	}
	body := `{"id":"resp_b","object":"response","status":"completed","model":"gpt-4.1-mini","output":[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"hello b","annotations":[]}]}],"usage":{"input_tokens":3,"output_tokens":2,"total_tokens":5}}`
	in := write("in.jsonl", req("a")+"\n"+req("b")+"\n")
	out := write("out.jsonl", `{"id":"batch_req_2","custom_id":"b","response":{"status_code":200,"request_id":"req_2","body":`+body+`},"error":null}`+"\n")
	errs := write("err.jsonl", `{"id":"batch_req_1","custom_id":"a","response":{"status_code":400,"request_id":"req_1","body":{"error":{"message":"The requested model 'x' does not exist.","type":"invalid_request_error","param":"model","code":"model_not_found"}}},"error":null}`+"\n")
	obj := write("batch.json", `{"id":"batch_abc","object":"batch","endpoint":"/v1/responses","status":"completed","input_file_id":"file-1","created_at":1764900000}`)

	db := filepath.Join(dir, "m.db")
	code, stdout, stderr := mw(t, "--db", db, "import", errs, obj, out, in)
	if code != 0 || !strings.Contains(stdout, "imported 2 session(s)") {
		t.Fatalf("import: %d %q %q", code, stdout, stderr)
	}
	_, list, _ := mw(t, "--db", db, "sessions", "--json")
	for _, want := range []string{`"title":"[batch_abc · completed] a"`, `"title":"[batch_abc · completed] b"`} {
		if !strings.Contains(list, want) {
			t.Errorf("sessions --json lacks %s:\n%s", want, list)
		}
	}

	fresh := filepath.Join(dir, "fresh.db")
	dup := write("dup.jsonl", req("a")+"\n"+req("a")+"\n")
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{in}, "no output or error file"},
		{[]string{dup, out}, `dup.jsonl:2: custom_id "a" is already on line 1`},
		{[]string{in, filepath.Join(dir, "missing.jsonl")}, "cannot read"},
		{[]string{"--format", "batch", obj}, "no input file"},
	} {
		code, _, stderr := mw(t, append([]string{"--db", fresh, "import"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.msg) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("import %v: %d %q, want exit 2 and one line saying %q", c.args, code, stderr, c.msg)
		}
	}
	if _, list, _ := mw(t, "--db", fresh, "sessions", "--json"); strings.TrimSpace(list) != "" {
		t.Errorf("bad batch imports stored sessions: %s", list)
	}
}
