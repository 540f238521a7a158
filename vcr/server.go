package vcr

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/modelwire/modelwire/redact"
)

// CassetteHeader names the cassette a request to the Server belongs to
// (else the path says it: /c/NAME/…).
const CassetteHeader = "X-Modelwire-Cassette"

// pathPrefix is the path form: /c/NAME/ before the provider's path.
const pathPrefix = "/c/"

// maxOpen bounds the cassettes a Server keeps in memory; past it a saved
// one is dropped (it is read again when asked for).
const maxOpen = 64

// ServerOptions configure a Server.
type ServerOptions struct {
	// Dir holds the cassettes, NAME.jsonl each.
	Dir  string
	Mode Mode
	// Upstream is the base URL misses go to in record, update and hybrid
	// modes; nil sends each to its protocol's provider.
	Upstream *url.URL
	// Transport carries them (default http.DefaultTransport).
	Transport http.RoundTripper
	// Timed replays streams with their recorded timing.
	Timed bool
	// Ignore are JSON pointers left out of matching (DefaultIgnore too).
	Ignore []string
	// Rules redact personal data from what is recorded, besides keys.
	Rules *redact.BodyRules
	// MaxBody bounds one body (default DefaultMaxBody).
	MaxBody int64
}

// Server serves a directory of cassettes to any client by base URL: the
// cassette is named per request by the X-Modelwire-Cassette header or a
// /c/NAME/ path prefix, and played, recorded or both as the mode says;
// each recorded exchange is saved at once.
type Server struct {
	o   ServerOptions
	cfg config

	mu      sync.Mutex
	open    map[string]*engine
	started map[string]bool // recorded in this run: reopened, not begun again
}

// NewServer checks the options.
func NewServer(o ServerOptions) (*Server, error) {
	if st, err := os.Stat(o.Dir); err != nil || !st.IsDir() {
		if o.Mode == Replay || err == nil {
			return nil, fmt.Errorf("--cassettes %s: not a directory", o.Dir)
		}
		if err := os.MkdirAll(o.Dir, 0o755); err != nil {
			return nil, err
		}
	}
	ign, err := ignorePointers(append(append([]string{}, DefaultIgnore...), o.Ignore...))
	if err != nil {
		return nil, err
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.Transport == nil {
		o.Transport = http.DefaultTransport
	}
	return &Server{o: o, cfg: config{mode: o.Mode, timed: o.Timed, ignore: ign, rules: o.Rules, maxBody: o.MaxBody},
		open: map[string]*engine{}, started: map[string]bool{}}, nil
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$`)

// cassetteOf reads a request's cassette name and its provider path.
func cassetteOf(r *http.Request) (name, path string, err error) {
	path = r.URL.Path
	if name = r.Header.Get(CassetteHeader); name == "" {
		rest, ok := strings.CutPrefix(path, pathPrefix)
		if !ok {
			return "", "", fmt.Errorf("no cassette named: send the %s header or put /c/NAME before the path", CassetteHeader)
		}
		name, path, _ = strings.Cut(rest, "/")
		path = "/" + path
	}
	if !nameRE.MatchString(name) || strings.Contains(name, "..") || len(name) > 200 {
		return "", "", fmt.Errorf("cassette name %q: letters, digits, _ . - and / between names only", name)
	}
	return name, path, nil
}

// ServeHTTP answers one request from its cassette.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, path, err := cassetteOf(r)
	if err != nil {
		http.Error(w, "modelwire vcr: "+err.Error(), http.StatusBadRequest)
		return
	}
	body, err := readBody(r.Body, s.o.MaxBody)
	if err != nil {
		http.Error(w, "modelwire vcr: "+err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	e, err := s.engine(name)
	if err != nil {
		resp := mismatchResponse(r, protocolOf(r, ""), &Mismatch{Cassette: name, Update: err.Error()})
		writeResponse(w, resp)
		return
	}
	req := r.Clone(r.Context())
	req.URL.Path, req.URL.RawPath = path, ""
	resp, miss, err := e.do(req, body)
	if err != nil {
		http.Error(w, "modelwire vcr: "+err.Error(), http.StatusBadGateway)
		return
	}
	if miss != nil {
		miss.Update = fmt.Sprintf("modelwire serve --cassettes %s --mode update", s.o.Dir)
		resp = mismatchResponse(r, protocolOf(req, e.c.session.Protocol), miss)
	}
	writeResponse(w, resp)
}

// engine is the open cassette name, opened now if it is not.
func (s *Server) engine(name string) (*engine, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.open[name]; e != nil {
		return e, nil
	}
	file := filepath.Join(s.o.Dir, filepath.FromSlash(cassettePath(name)))
	mode := s.o.Mode
	if mode == Record && s.started[name] {
		mode = Update // read back what this run recorded
	}
	s.started[name] = true
	c, err := open(file, mode)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || strings.Contains(err.Error(), "does not exist") {
			return nil, fmt.Errorf("no cassette %s in %s: record it with modelwire serve --cassettes %s --mode record", name, s.o.Dir, s.o.Dir)
		}
		return nil, err
	}
	c.name = name
	e := &engine{cfg: s.cfg, c: c, save: func(c *Cassette) error { return c.WriteFile(file) }}
	e.send = func(req *http.Request) (*http.Response, error) {
		u, err := upstreamURL(s.o.Upstream, req, req.URL.Path)
		if err != nil {
			return nil, err
		}
		out := req.Clone(req.Context())
		out.URL, out.Host = u, ""
		return s.o.Transport.RoundTrip(out)
	}
	if len(s.open) >= maxOpen {
		for k := range s.open { // each is saved as it records: any may go
			delete(s.open, k)
			break
		}
	}
	s.open[name] = e
	return e, nil
}

// Handler plays one cassette back (`serve --session`: a stored session
// exported as one): each request is matched against all its exchanges.
func Handler(c *Cassette, timed bool) http.Handler {
	ign, _ := ignorePointers(DefaultIgnore)
	e := &engine{cfg: config{mode: Replay, timed: timed, ignore: ign, maxBody: DefaultMaxBody}, c: c}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "the recording answers POST requests only", http.StatusMethodNotAllowed)
			return
		}
		body, err := readBody(r.Body, DefaultMaxBody)
		if err != nil {
			http.Error(w, "modelwire vcr: "+err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		resp, _, err := e.do(r, body)
		if err != nil {
			http.Error(w, "modelwire vcr: "+err.Error(), http.StatusBadGateway)
			return
		}
		writeResponse(w, resp)
	})
}
