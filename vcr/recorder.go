package vcr

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/redact"
)

// EnvMode is the environment variable that sets every recorder's mode
// (replay, record, update, hybrid, live), over the test's own option, as
// snapshot tests are updated: MODELWIRE_VCR=update go test ./...
const EnvMode = "MODELWIRE_VCR"

// TB is the part of testing.TB a Recorder uses (*testing.T and
// *testing.B are ones).
type TB interface {
	Helper()
	Name() string
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// Option configures a Recorder.
type Option func(*recorderConfig)

type recorderConfig struct {
	config
	upstream       http.RoundTripper
	ignore         []string
	patterns, ptrs []string
	modeSet        bool
}

// WithMode sets the recorder's mode (MODELWIRE_VCR, when set, wins).
func WithMode(m Mode) Option { return func(c *recorderConfig) { c.mode, c.modeSet = m, true } }

// WithUpstream sets the transport requests go out on in record, update,
// hybrid and live modes (default http.DefaultTransport).
func WithUpstream(rt http.RoundTripper) Option { return func(c *recorderConfig) { c.upstream = rt } }

// WithRecordedTiming replays each stream event at its recorded offset
// from the request, instead of at full speed.
func WithRecordedTiming() Option { return func(c *recorderConfig) { c.timed = true } }

// WithIgnore adds JSON pointers into the request body that matching
// leaves out (volatile members: a request id, a timestamp); "*" matches
// any one member or element. DefaultIgnore is always left out.
func WithIgnore(pointers ...string) Option {
	return func(c *recorderConfig) { c.ignore = append(c.ignore, pointers...) }
}

// WithRedact adds regular expressions whose matches are removed from
// every string of what the cassette keeps (keys always are).
func WithRedact(patterns ...string) Option {
	return func(c *recorderConfig) { c.patterns = append(c.patterns, patterns...) }
}

// WithRedactPointers adds JSON pointers whose values the cassette keeps
// as "[redacted]" (in request bodies, response bodies and each event).
func WithRedactPointers(pointers ...string) Option {
	return func(c *recorderConfig) { c.ptrs = append(c.ptrs, pointers...) }
}

// WithMaxBody bounds one request or response body (default 64 MiB).
func WithMaxBody(n int64) Option { return func(c *recorderConfig) { c.maxBody = n } }

// Recorder is an http.RoundTripper that answers from a cassette, records
// into it, or both, by its mode. Hand its Client to an SDK
// (option.WithHTTPClient, genai's ClientConfig.HTTPClient).
type Recorder struct {
	t    TB
	path string
	eng  *engine
}

// New opens the cassette at path (NAME or NAME.jsonl) for the test t. In
// replay mode the cassette must exist; recorded cassettes are written when
// the test ends. Bad options or an unreadable cassette fail the test.
func New(t TB, path string, opts ...Option) *Recorder {
	t.Helper()
	rc := recorderConfig{config: config{maxBody: DefaultMaxBody}}
	for _, o := range opts {
		o(&rc)
	}
	if env := os.Getenv(EnvMode); env != "" {
		m, err := ParseMode(env)
		if err != nil {
			t.Fatalf("vcr: %s: %v", EnvMode, err)
			return nil
		}
		rc.mode = m
	}
	ign, err := ignorePointers(append(append([]string{}, DefaultIgnore...), rc.ignore...))
	if err != nil {
		t.Fatalf("vcr: %v", err)
		return nil
	}
	rc.config.ignore = ign
	if rc.config.rules, err = bodyRules(rc.patterns, rc.ptrs); err != nil {
		t.Fatalf("vcr: %v", err)
		return nil
	}
	if rc.upstream == nil {
		rc.upstream = http.DefaultTransport
	}
	path = cassettePath(path)
	r := &Recorder{t: t, path: path}
	c, err := open(path, rc.mode)
	if err != nil {
		t.Fatalf("vcr: %v\nrecord it: %s", err, updateCommand(t.Name(), "record"))
		return nil
	}
	r.eng = &engine{cfg: rc.config, send: rc.upstream.RoundTrip, c: c}
	t.Cleanup(r.finish)
	return r
}

// open reads a cassette for a mode: a new one to record, else the file
// (hybrid and update start from nothing when it does not exist yet).
func open(path string, m Mode) (*Cassette, error) {
	name := cassetteName(path)
	if m == Record || m == Live {
		return newCassette(name), nil
	}
	c, err := ReadFile(path)
	if os.IsNotExist(err) {
		if m == Replay {
			return nil, fmt.Errorf("cassette %s does not exist", path)
		}
		return newCassette(name), nil
	}
	return c, err
}

// bodyRules builds the declared redaction rules (nil: none).
func bodyRules(patterns, pointers []string) (*redact.BodyRules, error) {
	if len(patterns) == 0 && len(pointers) == 0 {
		return nil, nil
	}
	b, _ := adapters.MarshalBody(map[string][]string{"patterns": patterns, "pointers": pointers})
	return redact.ParseBodyRules(b)
}

// finish writes a recorded cassette when the test ends.
func (r *Recorder) finish() {
	r.eng.mu.Lock()
	defer r.eng.mu.Unlock()
	if r.eng.cfg.mode == Record || r.eng.c.changed {
		if err := r.eng.c.WriteFile(r.path); err != nil {
			r.t.Errorf("vcr: writing cassette %s: %v", r.path, err)
		}
	}
}

// RoundTrip answers one request.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		body, err = readBody(req.Body, r.eng.cfg.maxBody)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("vcr: %w", err)
		}
	}
	resp, miss, err := r.eng.do(req, body)
	if err != nil {
		return nil, fmt.Errorf("vcr: %w", err)
	}
	if miss != nil {
		miss.Update = updateCommand(r.t.Name(), "update")
		r.t.Errorf("vcr: %s", miss.Explain())
		resp = mismatchResponse(req, protocolOf(req, r.eng.c.session.Protocol), miss)
	}
	return resp, nil
}

// Client is an *http.Client whose transport is the recorder.
func (r *Recorder) Client() *http.Client { return &http.Client{Transport: r} }

// Mode is the mode the recorder runs in.
func (r *Recorder) Mode() Mode { return r.eng.cfg.mode }

// Path is the cassette's file.
func (r *Recorder) Path() string { return r.path }

// updateCommand is the command that runs one test again in a mode.
func updateCommand(test, mode string) string {
	parts := strings.Split(test, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return fmt.Sprintf("%s=%s go test -run '%s' %s", EnvMode, mode, strings.Join(parts, "/"), packageDir())
}

// packageDir is the working directory (a test's package) relative to its
// module's root, as go test takes it.
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil || rel == "." {
				return "."
			}
			return "./" + filepath.ToSlash(rel)
		}
		if filepath.Dir(dir) == dir {
			return "."
		}
	}
}
