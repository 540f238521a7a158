package store

import (
	"net/http"

	"github.com/modelwire/modelwire/redact"
)

// Redacted replaces a secret's value.
const Redacted = redact.Redacted

// Redact returns a copy of v without secrets, by the rules of package
// redact (the only place they live): for headers, the values of every
// secret header (Authorization, x-api-key, x-goog-api-key, the gateways'
// key headers, any name that says key, token, secret, auth, password or
// cookie); for a string (a URL, or any text that may quote one), secret
// query parameters, URLs' userinfo and bearer tokens. The store applies
// it to every URL, header set, title, manifest and error text it writes,
// so no caller can bypass it; others may use it to show the same things.
func Redact[T http.Header | map[string][]string | map[string]string | string](v T) T {
	switch x := any(v).(type) {
	case http.Header:
		return any(redact.Header(x)).(T)
	case map[string][]string:
		return any(map[string][]string(redact.Header(http.Header(x)))).(T)
	case map[string]string:
		if x == nil {
			return v
		}
		out := make(map[string]string, len(x))
		for k, val := range x {
			out[k] = redact.HeaderValue(k, val)
		}
		return any(out).(T)
	case string:
		return any(redact.Text(x)).(T)
	}
	return v
}
