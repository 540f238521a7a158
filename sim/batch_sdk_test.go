package sim_test

// The official Go SDK drives the simulator's Files and Batch API as it
// drives OpenAI's: upload a JSONL file, create a batch, poll it through
// its statuses, download its output and error files. Results come back
// in another order than the input's, matched by custom_id; a line the
// API would reject is a request-level error inside a completed batch; a
// file that is not a batch fails the batch with errors naming lines.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/sim"
)

// batchClient is an SDK client on a fresh simulator with opts.
func batchClient(t *testing.T, opts sim.Options) (openai.Client, string) {
	t.Helper()
	base := start(t, "", opts)
	return openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("sk-any"), option.WithMaxRetries(0)), base
}

// responsesLine is one input line to /v1/responses; its metadata names
// it, so the answer (which echoes metadata) says which request it is.
func responsesLine(id, model string) string {
	return fmt.Sprintf(`{"custom_id":%q,"method":"POST","url":"/v1/responses","body":{"model":%q,"input":"Refund order O-2048 line L1","metadata":{"case":%q}}}`, id, model, id)
}

// createBatch uploads input and creates a Responses batch over it.
func createBatch(t testing.TB, c openai.Client, input string) *openai.Batch {
	t.Helper()
	ctx := context.Background()
	f, err := c.Files.New(ctx, openai.FileNewParams{File: openai.File(strings.NewReader(input), "in.jsonl", "application/jsonl"),
		Purpose: openai.FilePurposeBatch})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Batches.New(ctx, openai.BatchNewParams{InputFileID: f.ID, Endpoint: openai.BatchNewParamsEndpointV1Responses,
		CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// runBatch uploads input, creates a batch over it and polls it until it
// ends, returning every status it was seen in and the final batch.
func runBatch(t *testing.T, c openai.Client, input string) ([]openai.BatchStatus, *openai.Batch) {
	t.Helper()
	return runBatchTo(t, c, input, openai.BatchNewParamsEndpointV1Responses)
}

// runBatchTo is runBatch for a batch of endpoint's requests.
func runBatchTo(t *testing.T, c openai.Client, input string, endpoint openai.BatchNewParamsEndpoint) ([]openai.BatchStatus, *openai.Batch) {
	t.Helper()
	ctx := context.Background()
	f, err := c.Files.New(ctx, openai.FileNewParams{File: openai.File(strings.NewReader(input), "requests.jsonl", "application/jsonl"),
		Purpose: openai.FilePurposeBatch})
	if err != nil {
		t.Fatal(err)
	}
	if f.Bytes != int64(len(input)) || f.Purpose != openai.FileObjectPurposeBatch || !strings.HasPrefix(f.ID, "file-") {
		t.Fatalf("uploaded file: %+v", f)
	}
	b, err := c.Batches.New(ctx, openai.BatchNewParams{InputFileID: f.ID, Endpoint: endpoint,
		CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	if err != nil {
		t.Fatal(err)
	}
	seen := []openai.BatchStatus{b.Status}
	for i := 0; i < 20 && !slices.Contains([]openai.BatchStatus{"completed", "failed", "cancelled", "expired"}, b.Status); i++ {
		if b, err = c.Batches.Get(ctx, b.ID); err != nil {
			t.Fatal(err)
		}
		if seen[len(seen)-1] != b.Status {
			seen = append(seen, b.Status)
		}
		// The files are the ended batch's: none before.
		if b.Status != "completed" && b.Status != "cancelled" && b.Status != "expired" && (b.OutputFileID != "" || b.ErrorFileID != "") {
			t.Errorf("a %s batch names its files: %s", b.Status, b.RawJSON())
		}
	}
	return seen, b
}

// download is a file's content through the SDK.
func download(t *testing.T, c openai.Client, id string) string {
	t.Helper()
	resp, err := c.Files.Content(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestBatchSDKCompletes(t *testing.T) {
	c, _ := batchClient(t, sim.Options{})
	var in []string
	for i := 1; i <= 6; i++ {
		in = append(in, responsesLine(fmt.Sprintf("req-%d", i), "gpt-4.1-mini"))
	}
	// A request the API rejects (a model it does not have) and one that
	// asks a batch to stream: request-level errors, not the batch's.
	in = append(in, responsesLine("bad-model", "claude-sonnet-4-5"),
		`{"custom_id":"wants-stream","method":"POST","url":"/v1/responses","body":{"model":"gpt-4.1-mini","input":"hi","stream":true}}`)
	seen, b := runBatch(t, c, strings.Join(in, "\n")+"\n")
	if want := []openai.BatchStatus{"validating", "in_progress", "finalizing", "completed"}; !slices.Equal(seen, want) {
		t.Fatalf("statuses seen while polling: %v, want %v", seen, want)
	}
	if b.RequestCounts.Total != 8 || b.RequestCounts.Completed != 6 || b.RequestCounts.Failed != 2 {
		t.Fatalf("request_counts %+v, want 8 total, 6 completed, 2 failed", b.RequestCounts)
	}
	if b.OutputFileID == "" || b.ErrorFileID == "" || b.CompletedAt == 0 || b.InProgressAt == 0 {
		t.Fatalf("completed batch lacks its files or times: %s", b.RawJSON())
	}

	out := strings.Split(strings.TrimSpace(download(t, c, b.OutputFileID)), "\n")
	var order []string
	for _, line := range out {
		r := gjson.Parse(line)
		id := r.Get("custom_id").String()
		order = append(order, id)
		if r.Get("response.status_code").Int() != 200 || r.Get("error").Type != gjson.Null || !strings.HasPrefix(r.Get("id").String(), "batch_req_") {
			t.Fatalf("output line: %s", line)
		}
		// The answer is that request's: the Responses object echoes the
		// metadata the line's body carried.
		body := r.Get("response.body")
		if body.Get("object").String() != "response" || body.Get("metadata.case").String() != id || body.Get("status").String() != "completed" {
			t.Fatalf("%s got an answer that is not its own: %s", id, body.Raw)
		}
	}
	if want := []string{"req-1", "req-2", "req-3", "req-4", "req-5", "req-6"}; slices.Equal(order, want) {
		t.Fatalf("output in input order %v: the simulator must shuffle, as the API promises no order", order)
	} else if sorted := slices.Sorted(slices.Values(order)); !slices.Equal(sorted, want) {
		t.Fatalf("output custom_ids %v, want each of %v once", order, want)
	}

	errs := map[string]gjson.Result{}
	for _, line := range strings.Split(strings.TrimSpace(download(t, c, b.ErrorFileID)), "\n") {
		r := gjson.Parse(line)
		errs[r.Get("custom_id").String()] = r
	}
	if r := errs["bad-model"]; r.Get("response.status_code").Int() != 400 || r.Get("response.body.error.code").String() != "model_not_found" {
		t.Fatalf("bad-model's error line: %s", r.Raw)
	}
	if r := errs["wants-stream"]; r.Get("response.status_code").Int() != 400 || !strings.Contains(r.Get("response.body.error.message").String(), "Streaming") {
		t.Fatalf("wants-stream's error line: %s", r.Raw)
	}

	// The list has it; cancelling an ended batch is refused.
	page, err := c.Batches.List(context.Background(), openai.BatchListParams{})
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != b.ID {
		t.Fatalf("list: %v %+v", err, page)
	}
	if _, err := c.Batches.Cancel(context.Background(), b.ID); err == nil {
		t.Fatal("cancelling a completed batch succeeded")
	}
}

// A malformed file fails the batch (not a request), every problem named
// by its line; no output file.
func TestBatchSDKFailedFile(t *testing.T) {
	c, _ := batchClient(t, sim.Options{})
	in := strings.Join([]string{
		responsesLine("a", "gpt-4.1-mini"),
		`{"custom_id":"b", not json`,
		responsesLine("a", "gpt-4.1-mini"),
		`{"custom_id":"c","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4.1-mini","messages":[]}}`,
	}, "\n")
	seen, b := runBatch(t, c, in)
	if want := []openai.BatchStatus{"validating", "failed"}; !slices.Equal(seen, want) {
		t.Fatalf("statuses %v, want %v", seen, want)
	}
	got := map[int64]string{}
	for _, e := range b.Errors.Data {
		got[e.Line] = e.Code
	}
	want := map[int64]string{2: "invalid_json_line", 3: "duplicate_custom_id", 4: "url_mismatch"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("errors by line %v, want %v (%s)", got, want, b.RawJSON())
	}
	if b.OutputFileID != "" || b.ErrorFileID != "" || b.FailedAt == 0 {
		t.Fatalf("failed batch: %s", b.RawJSON())
	}
}

// Cancelled while validating: cancelling, then cancelled; nothing ran.
func TestBatchSDKCancel(t *testing.T) {
	c, _ := batchClient(t, sim.Options{Batch: sim.BatchOptions{Polls: 3}})
	ctx := context.Background()
	b := createBatch(t, c, responsesLine("a", "gpt-4.1-mini"))
	var err error
	if b, err = c.Batches.Cancel(ctx, b.ID); err != nil || b.Status != "cancelling" {
		t.Fatalf("cancel: %v %v", err, b)
	}
	for i := 0; i < 3; i++ {
		if b, err = c.Batches.Get(ctx, b.ID); err != nil {
			t.Fatal(err)
		}
	}
	if b.Status != "cancelled" || b.OutputFileID != "" || b.CancelledAt == 0 {
		t.Fatalf("after cancel: %s", b.RawJSON())
	}
}

// The server holds what its bounds allow: an upload over MaxFileBytes is
// the API's 413 and kept nowhere; past KeepFiles the oldest file is gone.
func TestBatchBounds(t *testing.T) {
	c, _ := batchClient(t, sim.Options{Batch: sim.BatchOptions{MaxFileBytes: 1 << 10, KeepFiles: 2}})
	ctx := context.Background()
	big := strings.Repeat(responsesLine("x", "gpt-4.1-mini")+"\n", 20)
	_, err := c.Files.New(ctx, openai.FileNewParams{File: openai.File(strings.NewReader(big), "big.jsonl", "application/jsonl"), Purpose: openai.FilePurposeBatch})
	var apiErr *openai.Error
	if !asAPIError(err, &apiErr) || apiErr.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversize upload: %v, want 413", err)
	}
	var ids []string
	for i := 0; i < 3; i++ {
		f, err := c.Files.New(ctx, openai.FileNewParams{File: openai.File(bytes.NewReader([]byte(responsesLine("a", "m"))), "f.jsonl", "application/jsonl"),
			Purpose: openai.FilePurposeBatch})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, f.ID)
	}
	if _, err := c.Files.Get(ctx, ids[0]); !asAPIError(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound {
		t.Fatalf("the oldest of 3 files past KeepFiles=2: %v, want 404", err)
	}
	if _, err := c.Files.Get(ctx, ids[2]); err != nil {
		t.Fatalf("the newest file: %v", err)
	}
}

func asAPIError(err error, target **openai.Error) bool {
	e, ok := err.(*openai.Error)
	if ok {
		*target = e
	}
	return ok
}

// The batch object has the API's fields, null where unset, as clients
// that read it raw expect.
func TestBatchObjectShape(t *testing.T) {
	c, _ := batchClient(t, sim.Options{})
	_, b := runBatch(t, c, responsesLine("only", "gpt-4.1-mini"))
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(b.RawJSON()), &obj); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "object", "endpoint", "errors", "input_file_id", "completion_window", "status", "output_file_id",
		"error_file_id", "created_at", "in_progress_at", "expires_at", "finalizing_at", "completed_at", "failed_at", "expired_at",
		"cancelling_at", "cancelled_at", "request_counts", "metadata"} {
		if _, ok := obj[k]; !ok {
			t.Errorf("batch object lacks %q", k)
		}
	}
	if string(obj["error_file_id"]) != "null" || string(obj["errors"]) != "null" || string(obj["object"]) != `"batch"` {
		t.Errorf("batch object: %s", b.RawJSON())
	}
}

// A Chat Completions batch under --require-key: each line is sent with the
// create request's key, so it passes the key check as the request alone
// would; a client with a wrong key gets the provider's 401 at once.
func TestBatchChatWithRequiredKey(t *testing.T) {
	opts := sim.Options{RequireKey: true, Keys: map[string]string{"openai-chat": "sk-right", "openai-responses": "sk-right"}}
	base := start(t, "", opts)
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("sk-right"), option.WithMaxRetries(0))
	ctx := context.Background()
	in := `{"custom_id":"c1","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4.1-mini","messages":[{"role":"user","content":"Refund order O-2048 line L1"}]}}` + "\n" +
		`{"custom_id":"c2","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4.1-mini","messages":"not a list"}}` + "\n"
	_, b := runBatchTo(t, c, in, openai.BatchNewParamsEndpointV1ChatCompletions)
	out := gjson.Parse(download(t, c, b.OutputFileID))
	if out.Get("custom_id").String() != "c1" || out.Get("response.body.object").String() != "chat.completion" {
		t.Fatalf("c1's output: %s", out.Raw)
	}
	if e := gjson.Parse(download(t, c, b.ErrorFileID)); e.Get("custom_id").String() != "c2" || e.Get("response.status_code").Int() != 400 {
		t.Fatalf("c2's error line: %s", e.Raw)
	}
	wrong := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("sk-wrong"), option.WithMaxRetries(0))
	var apiErr *openai.Error
	if _, err := wrong.Batches.Get(ctx, b.ID); !asAPIError(err, &apiErr) || apiErr.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a wrong key: %v, want 401", err)
	}
}

// KeepFileBytes bounds the files held by what they hold: past it the
// oldest give way, however few files there are.
func TestBatchKeepFileBytes(t *testing.T) {
	c, _ := batchClient(t, sim.Options{Batch: sim.BatchOptions{KeepFileBytes: 3 << 10}})
	ctx := context.Background()
	data := strings.Repeat(responsesLine("x", "gpt-4.1-mini")+"\n", 7) // about 1.1 KiB
	var ids []string
	for range 4 {
		f, err := c.Files.New(ctx, openai.FileNewParams{File: openai.File(strings.NewReader(data), "f.jsonl", "application/jsonl"), Purpose: openai.FilePurposeBatch})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, f.ID)
	}
	var apiErr *openai.Error
	if _, err := c.Files.Get(ctx, ids[0]); !asAPIError(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound {
		t.Fatalf("the oldest of 4 files of %d bytes past 3 KiB: %v, want 404", len(data), err)
	}
	if _, err := c.Files.Get(ctx, ids[3]); err != nil {
		t.Fatalf("the newest file: %v", err)
	}
}

// A batch cancelled while it runs keeps what ran; the lines it had not
// run come back batch_cancelled in its error file.
func TestBatchSDKCancelMidRun(t *testing.T) {
	c, _ := batchClient(t, sim.Options{Batch: sim.BatchOptions{Polls: 3}})
	ctx := context.Background()
	b := createBatch(t, c, responsesLine("a", "gpt-4.1-mini")+"\n"+responsesLine("b", "gpt-4.1-mini")+"\n"+responsesLine("c", "gpt-4.1-mini")+"\n")
	var err error
	for b.Status != "in_progress" {
		if b, err = c.Batches.Get(ctx, b.ID); err != nil {
			t.Fatal(err)
		}
	}
	if b, err = c.Batches.Cancel(ctx, b.ID); err != nil || b.Status != "cancelling" {
		t.Fatalf("cancel: %v %v", err, b)
	}
	for b.Status != "cancelled" {
		if b, err = c.Batches.Get(ctx, b.ID); err != nil {
			t.Fatal(err)
		}
	}
	if b.RequestCounts.Completed != 1 || b.RequestCounts.Failed != 2 || b.OutputFileID == "" || b.ErrorFileID == "" {
		t.Fatalf("after cancel: %s", b.RawJSON())
	}
	if errs := download(t, c, b.ErrorFileID); strings.Count(errs, `"code":"batch_cancelled"`) != 2 {
		t.Errorf("the error file:\n%s", errs)
	}
}
