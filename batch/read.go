// Package batch is the Batch API's files as sessions: a batch's input file
// (one request a line, each with its custom_id), its output and error
// files (one result a line, in whatever order the batch wrote them) and,
// when given, the batch object, read together into one session per
// custom_id, request and result paired by the id and never by position.
// Import records each through the session journal as one non-streamed
// turn.
package batch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/store"
)

// Bounds on what an import reads: the Batch API's own limits on an
// input file (50,000 requests, 200 MB), with room for the answers.
const (
	MaxFileBytes = 512 << 20
	MaxRequests  = 50000
)

// Kind is what a file of a batch holds, known by its first line.
type Kind int

// The kinds of a batch's files.
const (
	KindNone    Kind = iota
	KindInput        // requests: custom_id, method, url, body
	KindResults      // an output or error file: custom_id, response, error
	KindObject       // the batch object (GET …/batches/{id})
)

// Sniff says which of a batch's files head (a file's first bytes) begins.
func Sniff(head []byte) Kind {
	head = bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	line, _, _ := bytes.Cut(head, []byte("\n"))
	if !bytes.HasPrefix(line, []byte("{")) {
		return KindNone
	}
	has := func(k string) bool { return bytes.Contains(line, []byte(`"`+k+`"`)) }
	switch {
	case has("custom_id") && has("url") && has("body"):
		return KindInput
	case has("custom_id") && (has("response") || has("error")):
		return KindResults
	case bytes.Contains(head, []byte(`"object"`)) && gjson.GetBytes(head, "object").String() == "batch":
		return KindObject
	case has("object") && has("input_file_id"): // a pretty-printed object cut by the head
		return KindObject
	}
	return KindNone
}

// File is one of a batch's files to import.
type File struct {
	Name string
	R    io.Reader
}

// request is one line of the input file.
type request struct {
	line     int
	customID string
	url      string
	desc     adapters.Descriptor
	body     []byte
	model    string
}

// result is one line of an output or error file.
type result struct {
	file   string
	line   int
	status int    // the response's HTTP status; 0 when the line has an error instead
	body   []byte // the response's body
	code   string // the error's code and message, when the request got no response
	msg    string
}

// object is what an import reads of the batch object.
type object struct {
	ID        string `json:"id"`
	Object    string `json:"object"`
	Status    string `json:"status"`
	CreatedAt int64  `json:"created_at"`
}

// parsed is a batch's files read and checked.
type parsed struct {
	group    string // the batch's id, or the input file's name
	status   string // the batch's status ("" without its object)
	created  int64
	requests []request
	results  map[string]result
}

// readFiles reads and checks the files, each known by its content: one
// input file, at least one output or error file, at most one batch object.
// The first problem is an InputError naming the file and line.
func readFiles(files []File) (*parsed, error) {
	p := &parsed{results: map[string]result{}}
	var input, obj *loaded
	var results []*loaded
	for _, file := range files {
		data, err := readAll(file)
		if err != nil {
			return nil, err
		}
		f := &loaded{Name: file.Name, data: data}
		switch Sniff(data[:min(len(data), 64<<10)]) {
		case KindInput:
			if input != nil {
				return nil, &store.InputError{File: f.Name, Entry: -1, Msg: "a second input file (" + input.Name + " is one): a batch has one"}
			}
			input = f
		case KindResults:
			results = append(results, f)
		case KindObject:
			if obj != nil {
				return nil, &store.InputError{File: f.Name, Entry: -1, Msg: "a second batch object (" + obj.Name + " is one)"}
			}
			obj = f
		default:
			return nil, &store.InputError{File: f.Name, Entry: -1, Msg: "not a batch file: its first line is neither a request (custom_id, url, body), a result (custom_id, response or error) nor the batch object"}
		}
	}
	if input == nil {
		return nil, &store.InputError{File: "batch", Entry: -1, Msg: "no input file among the files: the requests (custom_id, method, url, body a line) are needed to pair the results"}
	}
	if len(results) == 0 {
		return nil, &store.InputError{File: "batch", Entry: -1, Msg: "no output or error file among the files: nothing to pair the requests with"}
	}
	p.group = filepath.Base(input.Name)
	if obj != nil {
		var o object
		if err := json.Unmarshal(obj.data, &o); err != nil || o.Object != "batch" || o.ID == "" {
			return nil, &store.InputError{File: obj.Name, Entry: -1, Msg: "not a batch object (want a JSON object with \"object\":\"batch\" and its id)"}
		}
		p.group, p.status, p.created = o.ID, o.Status, o.CreatedAt
	}
	if err := p.readInput(input); err != nil {
		return nil, err
	}
	for _, f := range results {
		if err := p.readResults(f, input.Name); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// loaded is a file read whole.
type loaded struct {
	Name string
	data []byte
}

// readAll reads a file whole, at most MaxFileBytes.
func readAll(f File) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(f.R, MaxFileBytes+1))
	if err != nil {
		return nil, &store.InputError{File: f.Name, Entry: -1, Msg: err.Error()}
	}
	if len(data) > MaxFileBytes {
		return nil, &store.InputError{File: f.Name, Entry: -1, Msg: fmt.Sprintf("over %d MiB: larger than a batch's files can be", MaxFileBytes>>20)}
	}
	// JSON is UTF-8: encoding/json would quietly turn bad bytes into
	// U+FFFD and store a body that was never sent.
	if !utf8.Valid(data) {
		at := 0
		for at < len(data) {
			r, n := utf8.DecodeRune(data[at:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			at += n
		}
		return nil, &store.InputError{File: f.Name, Line: 1 + bytes.Count(data[:at], []byte("\n")), Entry: -1, Msg: fmt.Sprintf("not valid UTF-8 (at byte %d)", at)}
	}
	return data, nil
}

// lines calls fn with each non-blank line of f and its number (1-based).
func lines(f *loaded, fn func(n int, line []byte) error) error {
	n := 0
	for line := range bytes.Lines(f.data) {
		n++
		if line = bytes.TrimSpace(line); len(line) > 0 {
			if err := fn(n, line); err != nil {
				return err
			}
		}
	}
	return nil
}

// readInput reads the requests: each a JSON object with a custom_id
// unique in the file, POST to a path of a protocol that can be batched,
// and an object as body.
func (p *parsed) readInput(f *loaded) error {
	seen := map[string]int{}
	return lines(f, func(n int, line []byte) error {
		bad := func(format string, args ...any) error {
			return &store.InputError{File: f.Name, Line: n, Entry: -1, Msg: fmt.Sprintf(format, args...)}
		}
		var l struct {
			CustomID *string         `json:"custom_id"`
			Method   string          `json:"method"`
			URL      string          `json:"url"`
			Body     json.RawMessage `json:"body"`
		}
		if err := json.Unmarshal(line, &l); err != nil {
			return bad("not a JSON request line: %v", err)
		}
		switch {
		case l.CustomID == nil || *l.CustomID == "":
			return bad("no custom_id: each request needs one to be paired with its result")
		case seen[*l.CustomID] > 0:
			return bad("custom_id %q is already on line %d: results could not be paired", *l.CustomID, seen[*l.CustomID])
		case !strings.EqualFold(l.Method, http.MethodPost):
			return bad("method %q: batch requests are POST", l.Method)
		case !gjson.ParseBytes(l.Body).IsObject():
			return bad("body is not a JSON object")
		}
		d, ok := registry.Route(http.MethodPost, l.URL, "")
		if !ok || d.Batch == nil {
			return bad("url %q is not an endpoint a batch can send to", l.URL)
		}
		if len(p.requests) == MaxRequests {
			return bad("more than %d requests: more than a batch can hold", MaxRequests)
		}
		seen[*l.CustomID] = n
		p.requests = append(p.requests, request{line: n, customID: *l.CustomID, url: l.URL, desc: d, body: l.Body,
			model: d.Declared(l.URL, gjson.ParseBytes(l.Body)).Model})
		return nil
	})
}

// readResults reads an output or error file: each line a result for a
// custom_id of the input, once, with a response (status_code, body) or an
// error (code, message).
func (p *parsed) readResults(f *loaded, inputName string) error {
	ids := make(map[string]bool, len(p.requests))
	for _, r := range p.requests {
		ids[r.customID] = true
	}
	return lines(f, func(n int, line []byte) error {
		bad := func(format string, args ...any) error {
			return &store.InputError{File: f.Name, Line: n, Entry: -1, Msg: fmt.Sprintf(format, args...)}
		}
		var l struct {
			CustomID *string `json:"custom_id"`
			Response *struct {
				StatusCode *int            `json:"status_code"`
				Body       json.RawMessage `json:"body"`
			} `json:"response"`
			Error *struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &l); err != nil {
			return bad("not a JSON result line: %v", err)
		}
		switch {
		case l.CustomID == nil || *l.CustomID == "":
			return bad("no custom_id: a result that cannot be paired")
		case !ids[*l.CustomID]:
			return bad("custom_id %q is on no line of %s", *l.CustomID, inputName)
		}
		id := *l.CustomID
		if prev, ok := p.results[id]; ok {
			return bad("a second result for custom_id %q (the first is %s:%d)", id, prev.file, prev.line)
		}
		r := result{file: f.Name, line: n}
		switch {
		case l.Response != nil:
			if l.Response.StatusCode == nil || *l.Response.StatusCode < 100 || *l.Response.StatusCode > 599 {
				return bad("response.status_code is missing or not an HTTP status")
			}
			if !json.Valid(l.Response.Body) {
				return bad("response.body is missing")
			}
			r.status, r.body = *l.Response.StatusCode, l.Response.Body
		case l.Error != nil:
			if l.Error.Message == "" && l.Error.Code == "" {
				return bad("error has neither code nor message")
			}
			r.code, r.msg = l.Error.Code, l.Error.Message
		default:
			return bad("neither response nor error")
		}
		p.results[id] = r
		return nil
	})
}
