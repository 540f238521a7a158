package store

import (
	"net/http"
	"regexp"
	"strings"
	"sync"
)

// Redacted replaces a secret's value.
const Redacted = "[redacted]"

// secretHeaders are the headers whose values never reach the database:
// the providers' keys (Authorization, x-api-key, x-goog-api-key, api-key)
// and, because HAR files from browsers carry them, cookies.
var secretHeaders = map[string]bool{
	"authorization":       true,
	"proxy-authorization": true,
	"x-api-key":           true,
	"x-goog-api-key":      true,
	"api-key":             true,
	"cookie":              true,
	"set-cookie":          true,
}

// secretQuery matches the value of a key-like query parameter (Gemini's
// key=, and the spellings gateways use) anywhere in a text: a URL, or an
// error message that quotes one.
var secretQuery = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)((?:^|[?&;\s"'(,])(?:key|api[_-]?key|apikey|access_token)=)[^&#\s"'<>),]*`)
})

// bearer matches a bearer token quoted in free text.
var bearer = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{8,}`) })

// Redact returns a copy of v without secrets: for headers, the values of
// Authorization, x-api-key, x-goog-api-key, api-key (and Proxy-Authorization,
// Cookie, Set-Cookie); for a string (a URL, or any text that may quote one),
// the values of key= query parameters and bearer tokens. The store applies
// it to every URL, header set and error text it writes, so no caller can
// bypass it; others may use it to show the same things.
func Redact[T http.Header | map[string][]string | map[string]string | string](v T) T {
	switch x := any(v).(type) {
	case http.Header:
		return any(redactHeader(x)).(T)
	case map[string][]string:
		return any(map[string][]string(redactHeader(http.Header(x)))).(T)
	case map[string]string:
		if x == nil {
			return v
		}
		out := make(map[string]string, len(x))
		for k, val := range x {
			out[k] = redactValue(k, val)
		}
		return any(out).(T)
	case string:
		return any(redactText(x)).(T)
	}
	return v
}

func redactHeader(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out := make(http.Header, len(h))
	for k, vals := range h {
		cp := make([]string, len(vals))
		for i, val := range vals {
			cp[i] = redactValue(k, val)
		}
		out[k] = cp
	}
	return out
}

// redactValue redacts one header value. An Authorization value keeps its
// scheme ("Bearer [redacted]"), which is worth seeing and is no secret.
func redactValue(name, val string) string {
	if !secretHeaders[strings.ToLower(strings.TrimSpace(name))] {
		return redactText(val)
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
	case "bearer", "basic", "token", "digest", "apikey":
		return true
	}
	return false
}

func redactText(s string) string {
	if s == "" {
		return s
	}
	if strings.IndexByte(s, '=') >= 0 {
		s = secretQuery().ReplaceAllString(s, "${1}"+Redacted)
	}
	if len(s) >= 6 && strings.Contains(strings.ToLower(s), "bearer") {
		s = bearer().ReplaceAllString(s, "${1}"+Redacted)
	}
	return s
}
