package redact

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
)

// MinSecret is the shortest secret value searched for by Known: a shorter
// one would match ordinary text and corrupt the recording (the header or
// parameter that carried it is still redacted by name).
const MinSecret = 8

// Known is the set of secret values one request carried: the values of
// its secret headers and query parameters and of its URLs' userinfo. A
// provider that echoes a key back (in a response header, a body, an SSE
// event, an error) is caught by searching for these exact values, which
// no rule by name can do.
type Known struct {
	strs []string
	raw  [][]byte
}

// Collect gathers the secrets of a request's headers and of URLs (the
// request's, the upstream's).
func Collect(h http.Header, urls ...*url.URL) *Known {
	k := &Known{}
	for name, vs := range h {
		if !IsSecretName(name) {
			continue
		}
		for _, v := range vs {
			k.addCredential(v)
		}
	}
	for _, u := range urls {
		if u == nil {
			continue
		}
		if u.User != nil {
			k.Add(u.User.Username())
			if p, ok := u.User.Password(); ok {
				k.Add(p)
			}
		}
		for name, vs := range parseQuery(u.RawQuery) {
			if IsSecretName(name) {
				for _, v := range vs {
					k.Add(v)
				}
			}
		}
	}
	return k
}

// parseQuery reads a query as leniently as it can (a malformed pair is
// skipped, not the whole query).
func parseQuery(q string) url.Values {
	v, _ := url.ParseQuery(q)
	return v
}

// addCredential adds a header value: the whole value, and without its
// scheme; a Basic credential's user and password too.
func (k *Known) addCredential(v string) {
	v = strings.TrimSpace(v)
	k.Add(v)
	scheme, rest, ok := strings.Cut(v, " ")
	if !ok || !isAuthScheme(scheme) {
		return
	}
	rest = strings.TrimSpace(rest)
	k.Add(rest)
	if strings.EqualFold(scheme, "basic") {
		if dec, err := base64.StdEncoding.DecodeString(rest); err == nil {
			user, pass, _ := strings.Cut(string(dec), ":")
			k.Add(user)
			k.Add(pass)
		}
	}
}

// Add adds a secret value (one shorter than MinSecret is ignored), and
// its percent-encoded spellings, as a URL or a form would quote it.
func (k *Known) Add(v string) {
	v = strings.TrimSpace(v)
	if len(v) < MinSecret {
		return
	}
	k.add(v)
	k.add(url.QueryEscape(v))
	k.add(url.PathEscape(v))
}

func (k *Known) add(v string) {
	for _, s := range k.strs {
		if s == v {
			return
		}
	}
	k.strs = append(k.strs, v)
	k.raw = append(k.raw, []byte(v))
	// A longer value first: a secret that contains another is replaced whole.
	for i := len(k.strs) - 1; i > 0 && len(k.strs[i]) > len(k.strs[i-1]); i-- {
		k.strs[i], k.strs[i-1] = k.strs[i-1], k.strs[i]
		k.raw[i], k.raw[i-1] = k.raw[i-1], k.raw[i]
	}
}

// Empty reports whether no secret is known.
func (k *Known) Empty() bool { return k == nil || len(k.strs) == 0 }

// Text replaces every known secret in t.
func (k *Known) Text(t string) string {
	if k == nil {
		return t
	}
	for _, v := range k.strs {
		if strings.Contains(t, v) {
			t = strings.ReplaceAll(t, v, Redacted)
		}
	}
	return t
}

// Bytes replaces every known secret in b (a copy is made only when one
// is found).
func (k *Known) Bytes(b []byte) []byte {
	if k == nil {
		return b
	}
	for _, v := range k.raw {
		if bytes.Contains(b, v) {
			b = bytes.ReplaceAll(b, v, []byte(Redacted))
		}
	}
	return b
}

// Header returns h redacted by name (Header) and with every known
// secret replaced in the remaining values (a custom header that echoes a
// key).
func (k *Known) Header(h http.Header) http.Header {
	out := Header(h)
	if k.Empty() {
		return out
	}
	for name, vs := range out {
		for i, v := range vs {
			vs[i] = k.Text(v)
		}
		out[name] = vs
	}
	return out
}

// All is Text and the known secrets: for any text that is stored.
func (k *Known) All(t string) string { return k.Text(Text(t)) }
