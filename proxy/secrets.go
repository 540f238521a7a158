package proxy

import (
	"bytes"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/store"
)

// Keys never reach the database or the screen. The store already redacts
// the key headers, key= query parameters and bearer tokens in everything
// it writes as a URL, a header or an error; the proxy also records bodies,
// which the store keeps as they are. So before anything of an exchange
// leaves the proxy (to the journal or to the workbench), the proxy:
//
//   - collects the request's secrets: the values of its key headers
//     (Authorization, x-api-key, x-goog-api-key, api-key, Proxy-Authorization)
//     and of its key= query parameters;
//   - replaces every occurrence of those values, in the request body, the
//     response's raw events and the canonical events' text, by [redacted]
//     (a secret shorter than minSecret is not searched for: it would
//     match ordinary text and corrupt the recording; the header or query
//     field that carried it is still redacted);
//   - replaces, in the request body, the value of any member whose name
//     says it holds a key (api_key, apiKey, access_token, client_secret,
//     …; not a bare "key", which tools use for ordinary data).
//
// The exchange is forwarded unchanged: only the copies are scrubbed.

// minSecret is the shortest secret value searched for in bodies.
const minSecret = 8

var keyHeaders = []string{"Authorization", "Proxy-Authorization", "X-Api-Key", "X-Goog-Api-Key", "Api-Key"}

var keyParams = map[string]bool{"key": true, "api_key": true, "api-key": true, "apikey": true, "access_token": true}

// secretsOf collects a request's secret values.
func secretsOf(h http.Header, u *url.URL) []string {
	var out []string
	add := func(v string) {
		v = strings.TrimSpace(v)
		if len(v) >= minSecret {
			out = append(out, v)
		}
	}
	for _, name := range keyHeaders {
		for _, v := range h.Values(name) {
			if scheme, rest, ok := strings.Cut(strings.TrimSpace(v), " "); ok && isScheme(scheme) {
				add(rest)
			} else {
				add(v)
			}
		}
	}
	for k, vs := range u.Query() {
		if keyParams[strings.ToLower(k)] {
			for _, v := range vs {
				add(v)
			}
		}
	}
	return out
}

func isScheme(s string) bool {
	switch strings.ToLower(s) {
	case "bearer", "basic", "token", "apikey", "key":
		return true
	}
	return false
}

// keyMember matches a JSON member whose name says it holds a secret, with
// a string value.
var keyMember = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)("(?:api[_-]?key|apikey|access[_-]?token|refresh[_-]?token|client[_-]?secret|authorization|x-api-key|x-goog-api-key)"\s*:\s*")((?:[^"\\]|\\.)*)(")`)
})

// scrubber removes one request's secrets from what is recorded.
type scrubber struct {
	secrets [][]byte
	strs    []string
}

func newScrubber(secrets []string) *scrubber {
	s := &scrubber{strs: secrets}
	for _, v := range secrets {
		s.secrets = append(s.secrets, []byte(v))
	}
	return s
}

var redacted = []byte(store.Redacted)

// request scrubs a request body: known secrets anywhere, and key-named
// members.
func (s *scrubber) request(b []byte) []byte {
	b = s.bytes(b)
	if keyMember().Match(b) {
		b = keyMember().ReplaceAll(b, []byte("${1}"+store.Redacted+"${3}"))
	}
	return b
}

// bytes scrubs known secrets from bytes (a copy is made only when one is
// found).
func (s *scrubber) bytes(b []byte) []byte {
	for _, v := range s.secrets {
		if bytes.Contains(b, v) {
			b = bytes.ReplaceAll(b, v, redacted)
		}
	}
	return b
}

// text scrubs known secrets from a text.
func (s *scrubber) text(t string) string {
	for _, v := range s.strs {
		if strings.Contains(t, v) {
			t = strings.ReplaceAll(t, v, store.Redacted)
		}
	}
	return t
}

// step scrubs a step in place: its raw event and its events' text.
func (s *scrubber) step(st *adapters.Step) {
	if len(s.strs) == 0 {
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

// header is a redacted copy of a header set with lower-case names (as
// the workbench shows requests).
func redactedHeaders(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range store.Redact(h) {
		out[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	return out
}
