package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
)

// The simulator's Batch API, as OpenAI's is on the wire (openai-go's
// batch.go and file.go): a JSONL file uploaded, a batch created over it,
// its status moving validating → in_progress → finalizing → completed one
// step per Polls retrievals, so a client that polls sees each. Each line
// is answered by this server's own handler for the line's url, exactly as
// that request alone would be; the output file holds the lines that got a
// 2xx, the error file the rest, both in an order other than the input's
// (the API promises none). A file that is not a batch (a line that is not
// JSON, a duplicate custom_id, a url other than the batch's endpoint)
// fails the whole batch, with errors naming the line.

// batchStore holds the files and batches, under Options.Batch's bounds.
type batchStore struct {
	opts BatchOptions
	// mu is held while a batch's lines run: they go to the model's
	// endpoints, never back here, so it cannot be taken twice.
	mu        sync.Mutex
	files     map[string]*simFile
	fileOrder []string
	fileBytes int64
	batches   map[string]*simBatch
	order     []string // batch ids, oldest first
	issued    uint64   // ids issued, for the next
}

func newBatchStore(o BatchOptions) *batchStore {
	return &batchStore{opts: o.withDefaults(), files: map[string]*simFile{}, batches: map[string]*simBatch{}}
}

// newID is a fresh id with prefix; bs.mu is held. Ids are deterministic
// (a run's ids repeat from a fresh server), hex as the API's look.
func (bs *batchStore) newID(prefix string) string {
	bs.issued++
	return fmt.Sprintf("%s%016x%08x", prefix, splitmix(bs.issued), uint32(splitmix(^bs.issued)))
}

// splitmix is SplitMix64's mixer: a counter spread into an id.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// batchObject is the API's batch object; a nil field is sent as null.
type batchObject struct {
	ID               string            `json:"id"`
	Object           string            `json:"object"`
	Endpoint         string            `json:"endpoint"`
	Errors           *batchErrors      `json:"errors"`
	InputFileID      string            `json:"input_file_id"`
	CompletionWindow string            `json:"completion_window"`
	Status           string            `json:"status"`
	OutputFileID     *string           `json:"output_file_id"`
	ErrorFileID      *string           `json:"error_file_id"`
	CreatedAt        int64             `json:"created_at"`
	InProgressAt     *int64            `json:"in_progress_at"`
	ExpiresAt        *int64            `json:"expires_at"`
	FinalizingAt     *int64            `json:"finalizing_at"`
	CompletedAt      *int64            `json:"completed_at"`
	FailedAt         *int64            `json:"failed_at"`
	ExpiredAt        *int64            `json:"expired_at"`
	CancellingAt     *int64            `json:"cancelling_at"`
	CancelledAt      *int64            `json:"cancelled_at"`
	RequestCounts    batchCounts       `json:"request_counts"`
	Metadata         map[string]string `json:"metadata"`
}

type batchErrors struct {
	Object string       `json:"object"`
	Data   []batchError `json:"data"`
}

// batchError is one reason a batch failed; Line is 1-based, null when the
// reason is the whole file's.
type batchError struct {
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Param   *string `json:"param"`
	Line    *int    `json:"line"`
}

type batchCounts struct {
	Total     int `json:"total"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
}

// simBatch is a batch and what it needs to run its lines.
type simBatch struct {
	obj    batchObject
	ep     *adapters.BatchEndpoint
	header http.Header // the create request's (its key, a scenario header): each line is sent with them
	polls  int         // retrievals in the present status
	// A batch in progress: its lines in the order they run, how many
	// have run, and their answers so far (runSome, endRun).
	lines      []batchLine
	order      []int
	next       int
	out, errs  bytes.Buffer
	nOut, nErr int
	// What its lines gave, once the run ended (publish shows it).
	ran          *batchCounts
	outID, errID *string
}

// The statuses (openai-go's BatchStatus).
const (
	stValidating = "validating"
	stFailed     = "failed"
	stInProgress = "in_progress"
	stFinalizing = "finalizing"
	stCompleted  = "completed"
	stCancelling = "cancelling"
	stCancelled  = "cancelled"
	stExpired    = "expired"
)

// serveBatchAPI answers the Files and Batch API of d's provider.
func (s *Server) serveBatchAPI(w http.ResponseWriter, r *http.Request, d adapters.Descriptor) {
	simp, ok := s.simulated(w, r, d.Name)
	if !ok {
		return
	}
	ep := d.Batch
	if r.URL.Path == ep.Files || strings.HasPrefix(r.URL.Path, ep.Files+"/") {
		s.serveFiles(w, r, simp, ep)
		return
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, ep.Batches), "/")
	id, sub, _ := strings.Cut(rest, "/")
	switch {
	case rest == "" && r.Method == http.MethodPost:
		s.createBatch(w, r, simp, ep)
	case rest == "" && r.Method == http.MethodGet:
		s.listBatches(w, r, simp)
	case id != "" && sub == "" && r.Method == http.MethodGet:
		s.retrieveBatch(w, simp, id)
	case id != "" && sub == "cancel" && r.Method == http.MethodPost:
		s.cancelBatch(w, simp, id)
	default:
		writeError(w, simp.ErrorResponse(http.StatusNotFound, "invalid_request_error",
			fmt.Sprintf("Unknown request URL: %s %s. The simulator's batches: POST %s, GET %s, GET %s/{id}, POST %s/{id}/cancel.",
				r.Method, r.URL.Path, ep.Batches, ep.Batches, ep.Batches, ep.Batches)))
	}
}

// createBatch checks the create request as the API does (the file, the
// endpoint, the window) and keeps the batch, validating.
func (s *Server) createBatch(w http.ResponseWriter, r *http.Request, simp adapters.Simulated, ep *adapters.BatchEndpoint) {
	body, serr := readBody(r, simp)
	if serr != nil {
		writeError(w, serr)
		return
	}
	var req struct {
		InputFileID      string            `json:"input_file_id"`
		Endpoint         string            `json:"endpoint"`
		CompletionWindow string            `json:"completion_window"`
		Metadata         map[string]string `json:"metadata"`
	}
	bad := func(msg string) {
		writeError(w, simp.ErrorResponse(http.StatusBadRequest, "invalid_request_error", msg))
	}
	if err := json.Unmarshal(body, &req); err != nil {
		bad("We could not parse the JSON body of your request. (" + err.Error() + ")")
		return
	}
	switch {
	case req.InputFileID == "":
		bad("Missing required parameter: 'input_file_id'.")
		return
	case req.Endpoint == "":
		bad("Missing required parameter: 'endpoint'.")
		return
	case !slices.Contains(ep.Windows, req.CompletionWindow):
		bad(fmt.Sprintf("Invalid value for 'completion_window': %q. Supported values are: %s.", req.CompletionWindow, strings.Join(ep.Windows, ", ")))
		return
	}
	if d, ok := registry.Route(http.MethodPost, req.Endpoint, ""); !ok || d.Batch != ep {
		bad(fmt.Sprintf("Invalid value for 'endpoint': %q. The simulator batches %s.", req.Endpoint, strings.Join(batchable(ep), ", ")))
		return
	}
	bs := s.batches
	bs.mu.Lock()
	defer bs.mu.Unlock()
	f, ok := bs.files[req.InputFileID]
	switch {
	case !ok:
		writeError(w, simp.ErrorResponse(http.StatusNotFound, "invalid_request_error", "No such File object: "+req.InputFileID))
		return
	case f.Purpose != ep.Purpose:
		bad(fmt.Sprintf("The file %s has purpose %q; a batch's input file must have purpose %q.", f.ID, f.Purpose, ep.Purpose))
		return
	}
	now := s.now().Unix()
	exp := now + int64(bs.opts.Window/time.Second)
	b := &simBatch{ep: ep, header: r.Header.Clone(), obj: batchObject{ID: bs.newID(ep.BatchPrefix), Object: "batch", Endpoint: req.Endpoint,
		InputFileID: f.ID, CompletionWindow: req.CompletionWindow, Status: stValidating, CreatedAt: now, ExpiresAt: &exp,
		Metadata: req.Metadata}}
	bs.batches[b.obj.ID] = b
	bs.order = append(bs.order, b.obj.ID)
	for len(bs.order) > bs.opts.KeepBatches {
		delete(bs.batches, bs.order[0])
		bs.order = bs.order[1:]
	}
	writeJSON(w, simp, b.obj)
}

// batchable are the paths a batch's lines may go to: those of the
// protocols that share ep.
func batchable(ep *adapters.BatchEndpoint) []string {
	var out []string
	for _, d := range registry.All() {
		if d.Batch == ep {
			out = append(out, d.Endpoint.Paths[0])
		}
	}
	return out
}

// retrieveBatch answers a batch, moved on one step when it has spent
// Polls retrievals in its status.
func (s *Server) retrieveBatch(w http.ResponseWriter, simp adapters.Simulated, id string) {
	bs := s.batches
	bs.mu.Lock()
	defer bs.mu.Unlock()
	b := s.batch(w, simp, id)
	if b == nil {
		return
	}
	switch {
	case b.live() && s.now().Unix() >= *b.obj.ExpiresAt:
		s.expire(b)
	case b.polls+1 >= s.batches.opts.Polls:
		b.polls = 0
		s.advance(b)
	default:
		b.polls++
		if b.obj.Status == stInProgress {
			s.runSome(b)
		}
	}
	writeJSON(w, simp, b.obj)
}

// batch is the batch id names, or nil with the API's 404 written; bs.mu
// is held.
func (s *Server) batch(w http.ResponseWriter, simp adapters.Simulated, id string) *simBatch {
	b, ok := s.batches.batches[id]
	if !ok {
		writeError(w, simp.ErrorResponse(http.StatusNotFound, "invalid_request_error", "No batch found with id '"+id+"'."))
	}
	return b
}

// advance moves a batch to its next status; bs.mu is held. Its lines
// start to run as it enters in_progress, the rest run as it leaves.
func (s *Server) advance(b *simBatch) {
	now := s.now().Unix()
	o := &b.obj
	switch o.Status {
	case stValidating:
		if !s.validate(b) {
			return
		}
		o.Status, o.InProgressAt = stInProgress, &now
		s.runSome(b)
	case stInProgress:
		s.endRun(b, "")
		o.Status, o.FinalizingAt = stFinalizing, &now
		b.publish(false)
	case stFinalizing:
		o.Status, o.CompletedAt = stCompleted, &now
		b.publish(true)
	case stCancelling:
		s.endRun(b, "batch_cancelled")
		o.Status, o.CancelledAt = stCancelled, &now
		b.publish(true)
	}
}

// validate reads the batch's input file into its lines, or fails the
// batch as the API does; bs.mu is held.
func (s *Server) validate(b *simBatch) bool {
	f, ok := s.batches.files[b.obj.InputFileID]
	if !ok {
		s.failBatch(b, []batchError{{Code: "file_not_found", Message: "The input file " + b.obj.InputFileID + " is no longer held (the simulator's file bounds let it go)."}})
		return false
	}
	lines, errs := parseBatchInput(f.data, b.obj.Endpoint)
	if len(errs) > 0 {
		s.failBatch(b, errs)
		return false
	}
	b.obj.RequestCounts.Total = len(lines)
	b.lines, b.order = lines, shuffled(len(lines), b.obj.ID)
	return true
}

// live says whether the batch has not ended, so its window still counts.
func (b *simBatch) live() bool {
	switch b.obj.Status {
	case stValidating, stInProgress, stFinalizing:
		return true
	}
	return false
}

// expire ends a batch whose window has passed: the lines that ran keep
// their answers, the rest are answered batch_expired; bs.mu is held.
func (s *Server) expire(b *simBatch) {
	if b.obj.Status == stValidating && !s.validate(b) {
		return
	}
	s.endRun(b, "batch_expired")
	now := s.now().Unix()
	b.obj.Status, b.obj.ExpiredAt = stExpired, &now
	b.publish(true)
}

func (s *Server) failBatch(b *simBatch, errs []batchError) {
	now := s.now().Unix()
	b.obj.Status, b.obj.FailedAt = stFailed, &now
	b.obj.Errors = &batchErrors{Object: "list", Data: errs}
}

// cancelBatch cancels a batch that has not ended: cancelling now,
// cancelled at the next retrieval (what already ran stays in its files).
func (s *Server) cancelBatch(w http.ResponseWriter, simp adapters.Simulated, id string) {
	bs := s.batches
	bs.mu.Lock()
	defer bs.mu.Unlock()
	b := s.batch(w, simp, id)
	if b == nil {
		return
	}
	switch b.obj.Status {
	case stValidating, stInProgress, stFinalizing:
		now := s.now().Unix()
		b.obj.Status, b.obj.CancellingAt, b.polls = stCancelling, &now, 0
	case stCancelling:
	default:
		writeError(w, simp.ErrorResponse(http.StatusConflict, "invalid_request_error",
			fmt.Sprintf("Cannot cancel a batch with status '%s'.", b.obj.Status)))
		return
	}
	writeJSON(w, simp, b.obj)
}

// listBatches answers the list, newest first, with the API's cursor
// (limit 1..100, default 20; after an id).
func (s *Server) listBatches(w http.ResponseWriter, r *http.Request, simp adapters.Simulated) {
	limit := 20
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			writeError(w, simp.ErrorResponse(http.StatusBadRequest, "invalid_request_error", "Invalid 'limit': integer below minimum value or above maximum value (1 to 100)."))
			return
		}
		limit = n
	}
	after := r.URL.Query().Get("after")
	bs := s.batches
	bs.mu.Lock()
	data := []batchObject{}
	skipping := after != ""
	more := false
	for i := len(bs.order) - 1; i >= 0; i-- {
		id := bs.order[i]
		if skipping {
			skipping = id != after
			continue
		}
		if len(data) == limit {
			more = true
			break
		}
		data = append(data, bs.batches[id].obj)
	}
	bs.mu.Unlock()
	page := map[string]any{"object": "list", "data": data, "has_more": more, "first_id": nil, "last_id": nil}
	if len(data) > 0 {
		page["first_id"], page["last_id"] = data[0].ID, data[len(data)-1].ID
	}
	writeJSON(w, simp, page)
}

// writeJSON answers 200 with v as the provider's JSON.
func writeJSON(w http.ResponseWriter, simp adapters.Simulated, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		writeError(w, simp.ErrorResponse(http.StatusInternalServerError, "api_error", "simulator: "+err.Error()))
		return
	}
	writeBody(w, simp.ResponseHeaders(false), bytes.TrimRight(buf.Bytes(), "\n"))
}
