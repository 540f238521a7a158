package batch_test

// The official Go SDK runs a batch against the simulator (upload, create,
// poll, download the output and error files), and Import turns the files
// into one session per custom_id: each session's request is its line's
// and its answer the result that names its custom_id, whatever line of
// which file that result is on.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/batch"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/timeline"
)

// line is one request to /v1/responses; its metadata names it, and the
// Responses object echoes metadata, so an answer says whose it is.
func line(id, model string) string {
	return fmt.Sprintf(`{"custom_id":%q,"method":"POST","url":"/v1/responses","body":{"model":%q,"input":"Refund order O-2048 line L1","metadata":{"case":%q}}}`, id, model, id)
}

// sdkBatch runs input as a batch through the SDK on a fresh simulator and
// writes its files into dir: input.jsonl, output.jsonl and errors.jsonl
// (when the batch has them) and batch.json; it returns their paths.
func sdkBatch(t *testing.T, dir, input string) (*openai.Batch, []string) {
	t.Helper()
	return sdkBatchOn(t, dir, input, sim.Options{}, nil)
}

// sdkBatchOn is sdkBatch on a simulator with opts (its scenario the
// refund case); before each retrieval, beforePoll (when set) is told how
// many came before.
func sdkBatchOn(t *testing.T, dir, input string, opts sim.Options, beforePoll func(n int)) (*openai.Batch, []string) {
	t.Helper()
	sc, err := samples.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	opts.Scenario = sc
	base, err := sim.New(opts).Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("sk-any"), option.WithMaxRetries(0))
	f, err := c.Files.New(ctx, openai.FileNewParams{File: openai.File(strings.NewReader(input), "input.jsonl", "application/jsonl"), Purpose: openai.FilePurposeBatch})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Batches.New(ctx, openai.BatchNewParams{InputFileID: f.ID, Endpoint: openai.BatchNewParamsEndpointV1Responses,
		CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; b.Status != openai.BatchStatusCompleted && b.Status != openai.BatchStatusFailed && b.Status != openai.BatchStatusExpired; n++ {
		if beforePoll != nil {
			beforePoll(n)
		}
		if b, err = c.Batches.Get(ctx, b.ID); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	paths := []string{write("input.jsonl", []byte(input)), write("batch.json", []byte(b.RawJSON()))}
	for name, id := range map[string]string{"output.jsonl": b.OutputFileID, "errors.jsonl": b.ErrorFileID} {
		if id == "" {
			continue
		}
		resp, err := c.Files.Content(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, write(name, data))
	}
	return b, paths
}

func openFiles(t *testing.T, paths []string) []batch.File {
	t.Helper()
	var files []batch.File
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, batch.File{Name: p, R: bytes.NewReader(data)})
	}
	return files
}

func TestSDKBatchImportsPairedByCustomID(t *testing.T) {
	dir := t.TempDir()
	var in []string
	for i := 1; i <= 5; i++ {
		in = append(in, line(fmt.Sprintf("req-%d", i), "gpt-4.1-mini"))
	}
	in = append(in, line("bad-model", "claude-sonnet-4-5"))
	b, paths := sdkBatch(t, dir, strings.Join(in, "\n")+"\n")
	if b.Status != openai.BatchStatusCompleted || b.RequestCounts.Failed != 1 {
		t.Fatalf("batch: %s", b.RawJSON())
	}
	out, _ := os.ReadFile(filepath.Join(dir, "output.jsonl"))
	if strings.HasPrefix(string(out), `{"id":"batch_req_`) && strings.Contains(strings.SplitN(string(out), "\n", 2)[0], `"req-1"`) {
		t.Log("output happens to begin with req-1; pairing is still by id")
	}

	db, err := store.Open(filepath.Join(dir, "mw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The files in another order than the API gives them: each is known
	// by its content.
	paths[0], paths[len(paths)-1] = paths[len(paths)-1], paths[0]
	res, err := batch.Import(db, openFiles(t, paths))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sessions) != 6 {
		t.Fatalf("imported %d sessions, want one per custom_id (6)", len(res.Sessions))
	}
	for i, id := range res.Sessions {
		s, err := db.GetSession(id)
		if err != nil {
			t.Fatal(err)
		}
		group, status, customID, ok := s.Batch()
		if !ok || group != b.ID || status != "completed" {
			t.Fatalf("session %s: Batch() = %q %q %q %v, want batch %s completed", id, group, status, customID, ok, b.ID)
		}
		wantID := fmt.Sprintf("req-%d", i+1)
		if i == 5 {
			wantID = "bad-model"
		}
		if customID != wantID || len(s.Attempts) != 1 {
			t.Fatalf("session %d is %q with %d attempts, want %q (input order) with 1", i, customID, len(s.Attempts), wantID)
		}
		a := s.Attempts[0]
		if got := gjson.GetBytes(a.RequestBody, "metadata.case").String(); got != customID || a.Stream {
			t.Fatalf("%s: request body is %q's (stream %v)", customID, got, a.Stream)
		}
		var raw string
		if err := db.EachStep(id, 1<<30, func(st *store.StoredStep) {
			if st.Raw != nil {
				raw += st.Raw.Data
			}
		}); err != nil {
			t.Fatal(err)
		}
		// Replayed, it is one turn, at every entry to its end.
		r, err := timeline.NewReplayer(db, id, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Seek(r.Len()); err != nil || r.Turns() != 1 || len(r.State().Turns) != 1 {
			t.Fatalf("%s replays as %d turns (%d in its state at the end; %v), want 1", customID, r.Turns(), len(r.State().Turns), err)
		}
		if customID == "bad-model" {
			if s.Status != store.StatusFailed || a.StatusCode != 400 || s.FailedLayer != "transport" || !strings.Contains(raw, "model_not_found") {
				t.Fatalf("bad-model: status %s, HTTP %d, failed layer %q, body %s", s.Status, a.StatusCode, s.FailedLayer, raw)
			}
			continue
		}
		// The answer stored is the one the batch gave this custom_id.
		if s.Status != store.StatusDone || a.StatusCode != 200 || gjson.Get(raw, "metadata.case").String() != customID ||
			a.ResponseID != gjson.Get(raw, "id").String() || a.TerminalStatus != adapters.StatusCompleted {
			t.Fatalf("%s: status %s, HTTP %d, response %s (id %q) — not its own answer", customID, s.Status, a.StatusCode, raw, a.ResponseID)
		}
	}
}

// A line with no result at all (a cancelled or expired batch's) is a
// failed session saying so; the rest import.
func TestImportNoResult(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(filepath.Join(dir, "mw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	in := line("a", "m") + "\n" + line("b", "m") + "\n"
	errs := `{"id":"batch_req_1","custom_id":"b","response":null,"error":{"code":"batch_expired","message":"This request could not be executed before the completion window expired."}}` + "\n"
	res, err := batch.Import(db, []batch.File{{Name: "in.jsonl", R: strings.NewReader(in)}, {Name: "err.jsonl", R: strings.NewReader(errs)}})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"no result", "batch_expired"} {
		s, err := db.GetSession(res.Sessions[i])
		if err != nil {
			t.Fatal(err)
		}
		if _, status, _, _ := s.Batch(); status != "" || s.Status != store.StatusFailed || !strings.Contains(s.Attempts[0].Error, want) {
			t.Fatalf("session %d: batch status %q, %s, error %q; want failed with %q", i, status, s.Status, s.Attempts[0].Error, want)
		}
	}
}

// Bad files: one error naming the file, the line and the problem, and
// nothing stored.
func TestImportBadFiles(t *testing.T) {
	ok := line("a", "m") + "\n" + line("b", "m") + "\n"
	res := `{"id":"r1","custom_id":"a","response":{"status_code":200,"request_id":"q","body":{}},"error":null}` + "\n"
	for _, c := range []struct {
		name, in, out, want string
	}{
		{"bad json", ok + "{nope\n", res, "in.jsonl:3: not a JSON request line"},
		{"duplicate", ok + line("a", "m") + "\n", res, `in.jsonl:3: custom_id "a" is already on line 1`},
		{"unknown url", strings.Replace(ok, "/v1/responses", "/v1/messages", 1), res, `in.jsonl:1: url "/v1/messages" is not an endpoint a batch can send to`},
		{"stranger", ok, res + `{"id":"r2","custom_id":"zz","response":{"status_code":200,"body":{}},"error":null}` + "\n", `out.jsonl:2: custom_id "zz" is on no line of in.jsonl`},
		{"twice", ok, res + res, `out.jsonl:2: a second result for custom_id "a" (the first is out.jsonl:1)`},
		{"neither", ok, `{"id":"r1","custom_id":"a","response":null,"error":null}` + "\n", "out.jsonl:1: neither response nor error"},
		{"no results", ok, "", "no output or error file"},
		{"not utf-8", ok + strings.Replace(line("c", "m"), "Refund", "\xff", 1) + "\n", res, "in.jsonl:3: not valid UTF-8"},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, err := store.Open(filepath.Join(t.TempDir(), "mw.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			files := []batch.File{{Name: "in.jsonl", R: strings.NewReader(c.in)}}
			if c.out != "" {
				files = append(files, batch.File{Name: "out.jsonl", R: strings.NewReader(c.out)})
			}
			_, err = batch.Import(db, files)
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line with %q", err, c.want)
			}
			if list, _ := db.ListSessions(store.Filter{}); len(list) != 0 {
				t.Fatalf("%d sessions stored from a bad batch", len(list))
			}
		})
	}
}

// A key a line's body carries (a member named as a secret) reaches the
// database redacted, in the request and in an answer that echoes it.
func TestImportRedactsBodies(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "mw.db")
	db, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	const key = "sk-planted-0123456789abcdef"
	in := `{"custom_id":"a","method":"POST","url":"/v1/responses","body":{"model":"m","input":"x","api_key":"` + key + `"}}` + "\n"
	out := `{"id":"r","custom_id":"a","response":{"status_code":400,"body":{"error":{"message":"bad","type":"invalid_request_error"},"api_key":"` + key + `"}},"error":null}` + "\n"
	if _, err := batch.Import(db, []batch.File{{Name: "in", R: strings.NewReader(in)}, {Name: "out", R: strings.NewReader(out)}}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, p := range []string{dbPath, dbPath + "-wal"} {
		if raw, err := os.ReadFile(p); err == nil && bytes.Contains(raw, []byte(key)) {
			t.Errorf("the planted key is in %s", p)
		}
	}
}

// A batch whose window passes while it runs expires: the requests that
// ran keep their answers, the rest come back batch_expired in the error
// file, and each imports as its own session — answered, or failed with
// the batch's reason.
func TestSDKBatchExpires(t *testing.T) {
	dir := t.TempDir()
	var in []string
	for i := 1; i <= 4; i++ {
		in = append(in, line(fmt.Sprintf("req-%d", i), "gpt-4.1-mini"))
	}
	var mu sync.Mutex
	clock := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	// Four retrievals a status: the fourth starts the run (a line), the
	// fifth runs another; the window (an hour) passes before the sixth.
	b, paths := sdkBatchOn(t, dir, strings.Join(in, "\n")+"\n", sim.Options{Now: now, Batch: sim.BatchOptions{Polls: 4, Window: time.Hour}},
		func(n int) {
			if n == 5 {
				mu.Lock()
				clock = clock.Add(2 * time.Hour)
				mu.Unlock()
			}
		})
	if b.Status != openai.BatchStatusExpired || b.ExpiredAt == 0 || b.RequestCounts.Completed != 2 || b.RequestCounts.Failed != 2 ||
		b.OutputFileID == "" || b.ErrorFileID == "" {
		t.Fatalf("batch: %s", b.RawJSON())
	}
	errs, _ := os.ReadFile(filepath.Join(dir, "errors.jsonl"))
	if n := strings.Count(string(errs), `"code":"batch_expired"`); n != 2 {
		t.Fatalf("%d batch_expired lines in the error file, want 2:\n%s", n, errs)
	}

	db, err := store.Open(filepath.Join(dir, "mw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := batch.Import(db, openFiles(t, paths))
	if err != nil || len(res.Sessions) != 4 {
		t.Fatalf("import: %+v %v", res, err)
	}
	var done, expired int
	for _, id := range res.Sessions {
		s, err := db.GetSession(id)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case s.Status == store.StatusDone:
			done++
		case s.Status == store.StatusFailed && strings.Contains(s.Title, "expired"):
			expired++
		default:
			t.Errorf("session %s: %s %q", id, s.Status, s.Title)
		}
	}
	if done != 2 || expired != 2 {
		t.Errorf("%d answered and %d expired sessions, want 2 and 2", done, expired)
	}
}
