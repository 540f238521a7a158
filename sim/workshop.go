package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"unicode"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
)

// A workshop (serve --workshop) grades every request a participant of a
// room sends, as it arrives; the answer is still the provider's, with the
// grade in a header. The simulator only says who sent what and passes on
// what it read: the exercises and the grading live in package workshop.

// ParticipantHeader names a participant beside (or instead of) the key.
const ParticipantHeader = "X-Modelwire-Participant"

// WorkshopPath prefixes the workshop's own endpoints (/workshop/me, …).
const WorkshopPath = "/workshop/"

// Workshop grades a room's requests and serves its own endpoints.
type Workshop interface {
	// Grade sees one request to a protocol's endpoint once the provider's
	// checks have run on it, before it is answered. It returns headers
	// to add to the answer, or refuse: a reason to answer with an error
	// instead (the room is full); answered, when not nil, is called with
	// the answer once it is written.
	Grade(g Graded) (header http.Header, refuse string, answered func(Answer))
	// ServeWorkshop answers a request under WorkshopPath from the
	// participant the request names.
	ServeWorkshop(w http.ResponseWriter, r *http.Request, p Participant)
}

// Participant is who sent a request: ID is derived from the key the
// request carries and its ParticipantHeader (a hash: the key itself never
// leaves the simulator), Label is what a room shows.
type Participant struct {
	ID, Label string
}

// Graded is one request as the provider read it.
type Graded struct {
	Participant Participant
	Protocol    adapters.Descriptor
	Path        string
	Header      http.Header
	Body        []byte
	// In is the request read canonically; nil when the provider rejected
	// it before it could be read (Rejected says why).
	In *adapters.Inbound
	// Turn is the model turns the request's history carries (the stored
	// chain's included), -1 when it is not known.
	Turn     int
	Rejected *adapters.SimError
}

// Answer is what a graded request was answered: its status, headers and
// body, at most MaxAnswer bytes of it (Cut: more was sent).
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
	Cut    bool
}

// MaxAnswer bounds what is kept of one answer for the workshop: the
// simulator's answers are a few kilobytes, but a Responses answer echoes
// the request's instructions, which a client chooses.
const MaxAnswer = 1 << 20

// capture keeps what a graded request is answered, up to MaxAnswer.
type capture struct {
	http.ResponseWriter
	status int
	body   []byte
	cut    bool
	done   func(Answer)
}

func (c *capture) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *capture) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	keep := max(min(len(p), MaxAnswer-len(c.body)), 0)
	c.body = append(c.body, p[:keep]...)
	c.cut = c.cut || keep < len(p)
	return c.ResponseWriter.Write(p)
}

// Flush keeps a stream flowing through the capture.
func (c *capture) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (c *capture) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// answer hands the answer to the workshop (after the handler, a cut
// connection's too).
func (c *capture) answer() {
	if c.done != nil {
		c.done(Answer{Status: c.status, Header: c.Header().Clone(), Body: c.body, Cut: c.cut})
	}
}

// maxLabel bounds a participant's label.
const maxLabel = 40

// ParticipantOf is who sent r: the key it carries where any protocol's
// provider reads one, and its ParticipantHeader.
func ParticipantOf(r *http.Request) Participant {
	key := ""
	for _, d := range registry.All() {
		if key = presentedKey(d.Auth, r); key != "" {
			break
		}
	}
	name := cleanLabel(r.Header.Get(ParticipantHeader))
	sum := sha256.Sum256([]byte(key + "\x00" + name))
	id := "p-" + hex.EncodeToString(sum[:6])
	label := name
	if label == "" {
		label = id
	}
	return Participant{ID: id, Label: label}
}

// cleanLabel keeps a label short and printable.
func cleanLabel(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, strings.TrimSpace(s))
	if rs := []rune(s); len(rs) > maxLabel {
		s = string(rs[:maxLabel])
	}
	return s
}

// grade hands a request to the workshop, if there is one; a refusal
// becomes the error the request is answered with.
func (s *Server) grade(w http.ResponseWriter, r *http.Request, simp adapters.Simulated, d adapters.Descriptor, body []byte, in *adapters.Inbound, turn int, serr *adapters.SimError) *adapters.SimError {
	if s.opts.Workshop == nil {
		return serr
	}
	h, refuse, answered := s.opts.Workshop.Grade(Graded{Participant: ParticipantOf(r), Protocol: d, Path: r.URL.Path,
		Header: r.Header, Body: body, In: in, Turn: turn, Rejected: serr})
	for k, v := range h {
		for _, x := range v {
			w.Header().Add(k, headerSafe(x))
		}
	}
	if refuse != "" {
		return simp.ErrorResponse(http.StatusTooManyRequests, "rate_limit_error", "workshop: "+refuse)
	}
	if c, ok := w.(*capture); ok {
		c.done = answered
	}
	return serr
}
