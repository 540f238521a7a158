package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
)

// batchLine is one request of a batch's input file.
type batchLine struct {
	CustomID string          `json:"custom_id"`
	Method   string          `json:"method"`
	URL      string          `json:"url"`
	Body     json.RawMessage `json:"body"`
}

// maxBatchErrors bounds the errors a failed batch lists.
const maxBatchErrors = 100

// parseBatchInput reads an input file as the API validates one: each
// line a JSON object with a custom_id unique in the file, method POST,
// the batch's endpoint as url and an object as body. What is wrong is
// said per line (1-based), as a failed batch's errors.
func parseBatchInput(data []byte, endpoint string) ([]batchLine, []batchError) {
	var lines []batchLine
	var errs []batchError
	seen := map[string]int{}
	fail := func(n int, code, param, format string, args ...any) {
		if len(errs) < maxBatchErrors {
			e := batchError{Code: code, Message: fmt.Sprintf(format, args...), Line: &n}
			if param != "" {
				e.Param = &param
			}
			errs = append(errs, e)
		}
	}
	n := 0
	for raw := range bytes.SplitSeq(data, []byte("\n")) {
		n++
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		var l batchLine
		if err := json.Unmarshal(raw, &l); err != nil {
			fail(n, "invalid_json_line", "", "This line is not parseable as valid JSON.")
			continue
		}
		switch {
		case l.CustomID == "":
			fail(n, "missing_required_parameter", "custom_id", "Missing required parameter: 'custom_id'.")
		case seen[l.CustomID] > 0:
			fail(n, "duplicate_custom_id", "custom_id", "The custom_id %q is already used on line %d; each request needs its own.", l.CustomID, seen[l.CustomID])
		case l.Method != http.MethodPost:
			fail(n, "invalid_method", "method", "The method %q is not supported; batch requests are POST.", l.Method)
		case l.URL != endpoint:
			fail(n, "url_mismatch", "url", "The url %q does not match the batch's endpoint %q.", l.URL, endpoint)
		case !gjson.ParseBytes(l.Body).IsObject():
			fail(n, "invalid_request", "body", "The body must be a JSON object.")
		default:
			seen[l.CustomID] = n
			lines = append(lines, l)
		}
	}
	if len(errs) == 0 && len(lines) == 0 {
		errs = append(errs, batchError{Code: "empty_file", Message: "The input file has no requests."})
	}
	return lines, errs
}

// batchResult is one line of an output or error file.
type batchResult struct {
	ID       string          `json:"id"`
	CustomID string          `json:"custom_id"`
	Response *batchResponse  `json:"response"`
	Error    *batchLineError `json:"error"`
}

// batchLineError is why a line got no response.
type batchLineError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type batchResponse struct {
	StatusCode int             `json:"status_code"`
	RequestID  string          `json:"request_id"`
	Body       json.RawMessage `json:"body"`
}

// runSome runs the next share of a batch's lines (all of them over its
// Polls retrievals in in_progress); bs.mu is held.
func (s *Server) runSome(b *simBatch) {
	polls := s.batches.opts.Polls
	share := (len(b.order) + polls - 1) / polls
	for range share {
		if b.next == len(b.order) {
			return
		}
		l := b.lines[b.order[b.next]]
		b.next++
		s.keepResult(b, batchResult{ID: s.batches.newID(b.ep.RequestPrefix), CustomID: l.CustomID,
			Response: s.answerLine(b, l, s.batches.newID("req_"))})
	}
}

// lineNotRun are the API's words for a line a batch ended before running
// (its error file's code), by that code.
var lineNotRun = map[string]string{
	"batch_expired":   "The request could not be executed before the completion window ended.",
	"batch_cancelled": "The batch was cancelled before this request executed.",
}

// endRun ends a batch's run: the lines not yet run are run (code "") or
// answered with the error code says, and the output and error files are
// written (a file only when it holds a line); bs.mu is held.
func (s *Server) endRun(b *simBatch, code string) {
	if b.ran != nil {
		return
	}
	for b.next < len(b.order) {
		if code == "" {
			s.runSome(b)
			continue
		}
		l := b.lines[b.order[b.next]]
		b.next++
		res := batchResult{ID: s.batches.newID(b.ep.RequestPrefix), CustomID: l.CustomID}
		res.Error = &batchLineError{Code: code, Message: lineNotRun[code]}
		s.keepResult(b, res)
	}
	// The counts and files show as the API shows them: the counts once
	// the batch is finalizing, the files once it has ended (publish).
	b.ran = &batchCounts{Total: len(b.lines), Completed: b.nOut, Failed: b.nErr}
	if b.nOut > 0 {
		f := s.keepOutput(b, "batch_"+b.obj.ID+"_output.jsonl", b.out.Bytes())
		b.outID = &f
	}
	if b.nErr > 0 {
		f := s.keepOutput(b, "batch_"+b.obj.ID+"_error.jsonl", b.errs.Bytes())
		b.errID = &f
	}
	b.lines, b.order, b.out, b.errs = nil, nil, bytes.Buffer{}, bytes.Buffer{}
}

// keepResult adds a line's result to the batch's output file (answered
// below 300) or error file.
func (s *Server) keepResult(b *simBatch, res batchResult) {
	line, err := json.Marshal(res)
	if err != nil { // a body is JSON the server wrote; never expected
		return
	}
	if res.Response != nil && res.Response.StatusCode < 300 {
		b.out.Write(line)
		b.out.WriteByte('\n')
		b.nOut++
		return
	}
	b.errs.Write(line)
	b.errs.WriteByte('\n')
	b.nErr++
}

// publish shows what the batch's run gave: its counts and, once the
// batch has ended (files true), its files.
func (b *simBatch) publish(files bool) {
	if b.ran == nil {
		return
	}
	b.obj.RequestCounts = *b.ran
	if files {
		b.obj.OutputFileID, b.obj.ErrorFileID = b.outID, b.errID
	}
}

// keepOutput keeps one of a batch's files; bs.mu is held.
func (s *Server) keepOutput(b *simBatch, name string, data []byte) string {
	bs := s.batches
	f := &simFile{Object: "file", Bytes: len(data), Created: s.now().Unix(), Filename: name, Purpose: b.ep.OutputPurpose,
		Status: "processed", data: data, ID: bs.newID(b.ep.FilePrefix)}
	bs.addFile(f)
	return f.ID
}

// answerLine is what the server answers the line's request with. A batch
// cannot stream: a body that asks for a stream is the provider's 400.
func (s *Server) answerLine(b *simBatch, l batchLine, requestID string) *batchResponse {
	d, _ := registry.Route(http.MethodPost, l.URL, "")
	simp, _ := s.simulatedOf(d.Name)
	if d.Declared(l.URL, gjson.ParseBytes(l.Body)).Stream {
		e := simp.ErrorResponse(http.StatusBadRequest, "invalid_request_error", "Streaming is not supported in a batch: remove 'stream' from the body.")
		return &batchResponse{StatusCode: e.Status, RequestID: requestID, Body: e.Body}
	}
	req := httptest.NewRequest(http.MethodPost, l.URL, bytes.NewReader(l.Body))
	for k, v := range b.header {
		switch strings.ToLower(k) {
		case "content-length", "content-type", "accept-encoding":
		default:
			req.Header[k] = v
		}
	}
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	body := bytes.TrimSpace(rec.Body.Bytes())
	if !json.Valid(body) {
		e := simp.ErrorResponse(http.StatusInternalServerError, "server_error", "simulator: the answer to this line was not JSON")
		return &batchResponse{StatusCode: e.Status, RequestID: requestID, Body: e.Body}
	}
	return &batchResponse{StatusCode: rec.Code, RequestID: requestID, Body: body}
}

// simulatedOf is a protocol's simulator side.
func (s *Server) simulatedOf(protocol string) (adapters.Simulated, bool) {
	p, err := registry.Lookup(protocol)
	if err != nil {
		return nil, false
	}
	simp, ok := p.(adapters.Simulated)
	return simp, ok
}

// shuffled is 0..n-1 in an order fixed by the batch's id, never the
// input's own when n > 1: results come back in another order, as the
// API's may, and a client that pairs by position fails every time.
func shuffled(n int, seed string) []int {
	h := fnv.New64a()
	h.Write([]byte(seed))
	r := rand.New(rand.NewPCG(h.Sum64(), 0x6d6f64656c77))
	p := r.Perm(n)
	same := true
	for i, v := range p {
		same = same && i == v
	}
	if same && n > 1 {
		p = append(p[1:], p[0])
	}
	return p
}
