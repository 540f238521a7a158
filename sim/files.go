package sim

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/modelwire/modelwire/adapters"
)

// BatchOptions bound what the simulator's Files and Batch API holds: a
// client cannot grow the server past them, whatever it uploads.
type BatchOptions struct {
	// MaxFileBytes is the largest file an upload may be (0:
	// DefaultMaxFileBytes); a larger one gets the provider's 413.
	MaxFileBytes int64
	// KeepFiles and KeepFileBytes bound the files held, uploads and
	// batches' outputs alike (0: the defaults): the oldest give way, as a
	// provider's expired files do.
	KeepFiles     int
	KeepFileBytes int64
	// KeepBatches bounds the batches held (0: DefaultKeepBatches).
	KeepBatches int
	// Polls is how many retrievals a batch spends in each status before
	// the next (0: 1): validating, in_progress, finalizing, completed. In
	// in_progress each retrieval runs a share of its lines.
	Polls int
	// Window is the time a batch has to end (0: the 24 hours its
	// completion_window names); a batch retrieved after it expires, its
	// lines not yet run answered with batch_expired.
	Window time.Duration
}

// The Files and Batch API's default bounds.
const (
	DefaultMaxFileBytes  = 32 << 20
	DefaultKeepFiles     = 1000
	DefaultKeepFileBytes = 256 << 20
	DefaultKeepBatches   = 1000
)

func (o BatchOptions) withDefaults() BatchOptions {
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.KeepFiles <= 0 {
		o.KeepFiles = DefaultKeepFiles
	}
	if o.KeepFileBytes <= 0 {
		o.KeepFileBytes = DefaultKeepFileBytes
	}
	if o.KeepBatches <= 0 {
		o.KeepBatches = DefaultKeepBatches
	}
	if o.Polls <= 0 {
		o.Polls = 1
	}
	if o.Window <= 0 {
		o.Window = 24 * time.Hour
	}
	return o
}

// simFile is one file the server holds: uploaded, or a batch's output.
type simFile struct {
	ID       string `json:"id"`
	Object   string `json:"object"`
	Bytes    int    `json:"bytes"`
	Created  int64  `json:"created_at"`
	Filename string `json:"filename"`
	Purpose  string `json:"purpose"`
	Status   string `json:"status"`
	// ExpiresAt and StatusDetails are null, as the API sends them for a
	// file with no expiry.
	ExpiresAt     *int64  `json:"expires_at"`
	StatusDetails *string `json:"status_details"`
	data          []byte
}

// addFile keeps a file under the bounds (the oldest files give way);
// bs.mu is held.
func (bs *batchStore) addFile(f *simFile) {
	bs.files[f.ID] = f
	bs.fileOrder = append(bs.fileOrder, f.ID)
	bs.fileBytes += int64(len(f.data))
	for len(bs.fileOrder) > 1 && (len(bs.fileOrder) > bs.opts.KeepFiles || bs.fileBytes > bs.opts.KeepFileBytes) {
		old := bs.fileOrder[0]
		bs.fileOrder = bs.fileOrder[1:]
		bs.fileBytes -= int64(len(bs.files[old].data))
		delete(bs.files, old)
	}
}

// serveFiles answers the files collection: an upload, a file's object,
// its content.
func (s *Server) serveFiles(w http.ResponseWriter, r *http.Request, simp adapters.Simulated, ep *adapters.BatchEndpoint) {
	rest := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, ep.Files), "/")
	id, sub, _ := strings.Cut(rest, "/")
	switch {
	case rest == "" && r.Method == http.MethodPost:
		s.uploadFile(w, r, simp, ep)
	case id != "" && sub == "" && r.Method == http.MethodGet:
		if f, ok := s.file(w, simp, id); ok {
			writeJSON(w, simp, f)
		}
	case id != "" && sub == "content" && r.Method == http.MethodGet:
		if f, ok := s.file(w, simp, id); ok {
			h := w.Header()
			h.Set("Content-Type", "application/octet-stream")
			h.Set("Content-Length", strconv.Itoa(len(f.data)))
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(f.data)
		}
	default:
		writeError(w, simp.ErrorResponse(http.StatusNotFound, "invalid_request_error",
			fmt.Sprintf("Unknown request URL: %s %s. The simulator's files: POST %s, GET %s/{id}, GET %s/{id}/content.", r.Method, r.URL.Path, ep.Files, ep.Files, ep.Files)))
	}
}

// file is the file id names, or the provider's 404 written.
func (s *Server) file(w http.ResponseWriter, simp adapters.Simulated, id string) (*simFile, bool) {
	bs := s.batches
	bs.mu.Lock()
	f, ok := bs.files[id]
	bs.mu.Unlock()
	if !ok {
		writeError(w, simp.ErrorResponse(http.StatusNotFound, "invalid_request_error", "No such File object: "+id))
	}
	return f, ok
}

// errTooLarge is an upload over MaxFileBytes.
var errTooLarge = errors.New("file too large")

// uploadFile takes a multipart upload (purpose, file) as the API does:
// the file streamed in, never more than MaxFileBytes of it read.
func (s *Server) uploadFile(w http.ResponseWriter, r *http.Request, simp adapters.Simulated, ep *adapters.BatchEndpoint) {
	bad := func(status int, msg string) {
		writeError(w, simp.ErrorResponse(status, "invalid_request_error", msg))
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		bad(http.StatusBadRequest, "Invalid file upload: the request must be multipart/form-data with the fields purpose and file.")
		return
	}
	limit := s.batches.opts.MaxFileBytes
	// The form's other parts and boundaries are small; the whole body is
	// bounded too, so no part of it is read without end.
	r.Body = http.MaxBytesReader(w, r.Body, limit+64<<10)
	mr, err := r.MultipartReader()
	if err != nil {
		bad(http.StatusBadRequest, "Invalid file upload: "+err.Error())
		return
	}
	var purpose, name string
	var data []byte
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			bad(uploadStatus(err), "Invalid file upload: "+uploadReason(err, limit))
			return
		}
		switch p.FormName() {
		case "purpose":
			b, err := io.ReadAll(io.LimitReader(p, 256))
			if err != nil {
				bad(uploadStatus(err), "Invalid file upload: "+uploadReason(err, limit))
				return
			}
			purpose = strings.TrimSpace(string(b))
		case "file":
			name = p.FileName()
			b, err := io.ReadAll(io.LimitReader(p, limit+1))
			if err == nil && int64(len(b)) > limit {
				err = errTooLarge
			}
			if err != nil {
				bad(uploadStatus(err), "Invalid file upload: "+uploadReason(err, limit))
				return
			}
			data = b
		}
	}
	switch {
	case data == nil:
		bad(http.StatusBadRequest, "Missing required parameter: 'file'.")
		return
	case purpose == "":
		bad(http.StatusBadRequest, "Missing required parameter: 'purpose'.")
		return
	case purpose != ep.Purpose:
		bad(http.StatusBadRequest, fmt.Sprintf("simulator: purpose %q is not served; the simulator keeps files for purpose %q only.", purpose, ep.Purpose))
		return
	}
	if name == "" {
		name = "upload.jsonl"
	}
	f := s.newFile(ep, name, ep.Purpose, data)
	writeJSON(w, simp, f)
}

// newFile keeps a new file and returns it.
func (s *Server) newFile(ep *adapters.BatchEndpoint, name, purpose string, data []byte) *simFile {
	bs := s.batches
	f := &simFile{Object: "file", Bytes: len(data), Created: s.now().Unix(), Filename: name, Purpose: purpose, Status: "processed", data: data}
	bs.mu.Lock()
	defer bs.mu.Unlock()
	f.ID = bs.newID(ep.FilePrefix)
	bs.addFile(f)
	return f
}

func uploadStatus(err error) int {
	var mbe *http.MaxBytesError
	if errors.Is(err, errTooLarge) || errors.As(err, &mbe) {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}

func uploadReason(err error, limit int64) string {
	if uploadStatus(err) == http.StatusRequestEntityTooLarge {
		return fmt.Sprintf("the file is over the simulator's %d MiB limit (serve --max-file-mib).", limit>>20)
	}
	return err.Error()
}
