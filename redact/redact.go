// Package redact is the one place the rules for secrets live: which
// headers, query parameters and JSON members carry a key, how a URL's
// userinfo and a key quoted in free text are hidden, and how the exact
// secret values a request carried are found again wherever a provider
// echoes them. Everything modelwire stores, logs, exports or shows passes
// through it (the store on every write, the proxy on every update, the
// command line on every banner); no other package keeps a list of secret
// names.
//
// A redacted value reads [redacted]. An Authorization value keeps its
// scheme ("Bearer [redacted]"), which is worth seeing and is no secret.
package redact

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// Redacted replaces a secret's value.
const Redacted = "[redacted]"

// secretNames are the header and parameter names known to carry keys,
// lower case: the providers' own and the gateways'. Any other name whose
// words say key, token, secret, auth, password or cookie is secret too
// (see IsSecretName); this list keeps the known ones explicit.
var secretNames = map[string]bool{
	"authorization": true, "proxy-authorization": true, "x-api-key": true, "x-goog-api-key": true,
	"api-key": true, "x-portkey-api-key": true, "ocp-apim-subscription-key": true, "cookie": true,
	"set-cookie": true, "key": true, "api_key": true, "apikey": true, "access_token": true,
	"token": true, "auth": true, "signature": true, "sig": true, "x-amz-security-token": true,
}

// secretWords are whole words of a name (split at - _ . and spaces) that
// make it secret; secretParts make it secret anywhere inside a word. A
// plural "tokens" (x-ratelimit-remaining-tokens, max_tokens) and a word
// merely ending in "key" (monkey) are not secret.
var (
	secretWords = []string{"key", "keys", "token", "auth", "sig", "signature", "credential", "credentials", "pass", "pwd"}
	secretParts = []string{"apikey", "accesskey", "secretkey", "privatekey", "subscriptionkey", "secret", "password", "passwd",
		"cookie", "authoriz", "authent", "authtoken", "accesstoken", "refreshtoken", "idtoken", "bearer", "credential"}
)

// IsSecretName reports whether a header or query parameter of this name
// carries a secret. A parameter name is percent-decoded first (k%65y is
// key).
func IsSecretName(name string) bool {
	n := strings.ToLower(strings.TrimSpace(unescape(name)))
	if n == "" {
		return false
	}
	if secretNames[n] {
		return true
	}
	for _, w := range strings.FieldsFunc(n, func(r rune) bool { return r == '-' || r == '_' || r == '.' || r == ' ' || r == '[' || r == ']' }) {
		for _, s := range secretWords {
			if w == s {
				return true
			}
		}
		for _, s := range secretParts {
			if strings.Contains(w, s) {
				return true
			}
		}
		if strings.HasSuffix(w, "token") || strings.HasPrefix(w, "auth") {
			return true
		}
	}
	return false
}

// unescape percent-decodes a name, repeatedly (k%2565y is k%65y is key),
// keeping what cannot be decoded.
func unescape(s string) string {
	for i := 0; i < 3 && strings.IndexByte(s, '%') >= 0; i++ {
		d, err := url.QueryUnescape(s)
		if err != nil || d == s {
			break
		}
		s = d
	}
	return s
}

// Header returns a redacted copy of h: secret headers' values replaced,
// every other value passed through Text.
func Header(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out := make(http.Header, len(h))
	for k, vals := range h {
		cp := make([]string, len(vals))
		for i, val := range vals {
			cp[i] = HeaderValue(k, val)
		}
		out[k] = cp
	}
	return out
}

// HeaderValue redacts one header value.
func HeaderValue(name, val string) string {
	if !IsSecretName(name) {
		return Text(val)
	}
	if val == "" {
		return val
	}
	if scheme, _, ok := strings.Cut(strings.TrimSpace(val), " "); ok && isAuthScheme(scheme) {
		return scheme + " " + Redacted
	}
	return Redacted
}

func isAuthScheme(s string) bool {
	switch strings.ToLower(s) {
	case "bearer", "basic", "token", "digest", "apikey", "key":
		return true
	}
	return false
}

// param matches a name=value pair in a text: a URL's query, a form, an
// error message quoting either (after ?, &, ;, a space, a quote, a
// bracket, or a JSON-escaped &).
var param = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:^|[?&;\s"'(,]|\\u0026)([A-Za-z0-9_.%\-\[\]]+)=([^&#\s"'<>),;\\]*)`)
})

// userinfo matches a URL's user:password@.
var userinfo = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://)([^/?#@\s"'<>]+)@`)
})

// bearer matches a bearer or basic credential quoted in free text.
var bearer = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)((?:bearer|basic)\s+)[A-Za-z0-9._~+/=-]{8,}`)
})

// Text returns s without the secrets a text can carry: the values of
// secret query parameters (by their decoded names) wherever a URL, a path
// or a form appears in it, URLs' userinfo, and bearer tokens. It is for
// every URL, header value, error message and title.
func Text(s string) string {
	if s == "" {
		return s
	}
	if strings.IndexByte(s, '=') >= 0 {
		s = params(s)
	}
	if strings.Contains(s, "://") && strings.IndexByte(s, '@') >= 0 {
		s = userinfo().ReplaceAllString(s, "${1}"+Redacted+"@")
	}
	if len(s) >= 6 {
		if l := strings.ToLower(s); strings.Contains(l, "bearer") || strings.Contains(l, "basic") {
			s = bearer().ReplaceAllString(s, "${1}"+Redacted)
		}
	}
	return s
}

// params redacts the values of secret name=value pairs.
func params(s string) string {
	idx := param().FindAllStringSubmatchIndex(s, -1)
	if idx == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range idx {
		name, v0, v1 := s[m[2]:m[3]], m[4], m[5]
		if v1 == v0 || !IsSecretName(name) || s[v0:v1] == Redacted {
			continue
		}
		b.WriteString(s[last:v0])
		b.WriteString(Redacted)
		last = v1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// URL is Text for one URL (its userinfo and secret parameters).
func URL(s string) string { return Text(s) }

// member matches a JSON member whose name says it holds a secret, with a
// string value. Bodies are stricter than headers: a bare "key" or
// "token" is ordinary data there (tool arguments, logprobs).
var member = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)("(?:api[_-]?key|apikey|access[_-]?token|refresh[_-]?token|id[_-]?token|client[_-]?secret|password|authorization|x-api-key|x-goog-api-key|x-portkey-api-key|ocp-apim-subscription-key)"\s*:\s*")((?:[^"\\]|\\.)*)(")`)
})

// JSONMembers replaces, in a JSON body, the string value of every member
// whose name says it holds a key (api_key, apiKey, access_token,
// client_secret, …).
func JSONMembers(b []byte) []byte {
	if member().Match(b) {
		b = member().ReplaceAll(b, []byte("${1}"+Redacted+"${3}"))
	}
	return b
}
