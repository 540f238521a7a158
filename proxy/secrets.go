package proxy

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/modelwire/modelwire/redact"
	"github.com/modelwire/modelwire/session"
)

// Keys never reach the database, the log or the screen. The rules live in
// package redact; the proxy applies them to everything of an exchange
// before it leaves the proxy (to the journal, the observers, the log):
//
//   - it collects the request's secrets: the values of its secret headers
//     and query parameters, and the upstream URL's userinfo (redact.Collect);
//   - it replaces every occurrence of those values, in the request body,
//     the response's headers, raw events and canonical events, the
//     summary, every error text and validation detail, by [redacted] —
//     a provider that echoes a key is caught here;
//   - it passes every URL, header and error text through the rules by
//     name (redact.Text, redact.Header), and redacts the key-named members
//     of the request body (redact.JSONMembers).
//
// Every update is sealed as it is emitted (session.SealUpdate), its
// step and summary included; a summary handed to hold mode's decider is
// sealed before. The exchange is forwarded unchanged: only the copies are
// scrubbed. Personal data named by body rules is removed from the same
// copies (bodyredact.go).

// scrubber removes one request's secrets, and the personal data the body
// rules name (bodyredact.go), from what is recorded.
type scrubber struct {
	known *redact.Known
	body  *redact.BodyRules // nil: none
}

// newScrubber collects the secrets of a request bound for target (the
// upstream URL, whose userinfo is a secret too).
func newScrubber(h http.Header, u *url.URL, target string) *scrubber {
	urls := []*url.URL{u}
	if t, err := url.Parse(target); err == nil && target != "" {
		urls = append(urls, t)
	}
	return &scrubber{known: redact.Collect(h, urls...)}
}

// request scrubs a request body: known secrets anywhere, and key-named
// members.
func (s *scrubber) request(b []byte) []byte { return s.body.JSON(redact.JSONMembers(s.known.Bytes(b))) }

// text scrubs known secrets from a text.
func (s *scrubber) text(t string) string { return s.known.Text(t) }

// all scrubs a text by the rules and of known secrets (URLs, errors).
func (s *scrubber) all(t string) string { return s.known.All(t) }

// update scrubs everything an update carries.
func (s *scrubber) update(u *session.Update) {
	session.SealUpdate(u, s.known)
	sealBody(u, s.body)
}

// redactedHeaders is a redacted copy of a header set with lower-case
// names (as the workbench shows requests).
func redactedHeaders(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range redact.Header(h) {
		out[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	return out
}
