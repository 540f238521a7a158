package proxy

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/modelwire/modelwire/adapters"
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
// The exchange is forwarded unchanged: only the copies are scrubbed.

// scrubber removes one request's secrets from what is recorded.
type scrubber struct{ known *redact.Known }

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
func (s *scrubber) request(b []byte) []byte { return redact.JSONMembers(s.bytes(b)) }

// bytes scrubs known secrets from bytes.
func (s *scrubber) bytes(b []byte) []byte { return s.known.Bytes(b) }

// text scrubs known secrets from a text.
func (s *scrubber) text(t string) string { return s.known.Text(t) }

// all scrubs a text by the rules and of known secrets (URLs, errors).
func (s *scrubber) all(t string) string { return s.known.All(t) }

// step scrubs a step in place: its raw event and its events' text.
func (s *scrubber) step(st *adapters.Step) {
	if s.known.Empty() {
		return
	}
	st.Raw.Data = s.text(st.Raw.Data)
	for i := range st.Events {
		ev := &st.Events[i]
		ev.Delta, ev.Detail = s.text(ev.Delta), s.text(ev.Detail)
		if ev.Final != nil {
			f := s.text(*ev.Final)
			ev.Final = &f
		}
		if len(ev.Arguments) > 0 {
			ev.Arguments = s.bytes(ev.Arguments)
		}
		if ev.Error != nil {
			e := *ev.Error
			e.Message = s.text(e.Message)
			ev.Error = &e
		}
	}
}

// update scrubs what an update carries besides steps and summaries
// (which are scrubbed where they are made): URLs, headers, error texts,
// the request shown, validation details, messages.
func (s *scrubber) update(u *session.Update) {
	u.URL, u.Err, u.Message = s.all(u.URL), s.all(u.Err), s.all(u.Message)
	if u.Header != nil {
		u.Header = s.known.Header(u.Header)
	}
	if len(u.ResponseBody) > 0 {
		u.ResponseBody = s.bytes(u.ResponseBody)
	}
	if u.APIError != nil {
		e := *u.APIError
		e.Message = s.all(e.Message)
		u.APIError = &e
	}
	if r := u.Request; r != nil {
		c := *r
		c.Path = s.all(c.Path)
		hs := make(map[string]string, len(c.Headers))
		for k, v := range c.Headers {
			hs[k] = s.text(redact.HeaderValue(k, v))
		}
		c.Headers = hs
		c.Body = s.bytes(c.Body)
		u.Request = &c
	}
	if len(u.Layers) > 0 {
		ls := append([]session.LayerResult{}, u.Layers...)
		for i := range ls {
			ls[i].Detail = s.all(ls[i].Detail)
		}
		u.Layers = ls
	}
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
