package sim

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
)

// KeyEnv is, per protocol, the environment variable its official SDK
// reads its key from (the descriptor's Auth.Env); `serve --require-key` takes the
// expected keys from them.
func KeyEnv() map[string]string {
	m := map[string]string{}
	for _, d := range registry.All() {
		m[d.Name] = d.Auth.Env
	}
	return m
}

// presentedKey is the API key a request carries where protocol's provider
// reads it (its descriptor's Auth): its own header, a bearer token, a query
// parameter.
func presentedKey(a adapters.Auth, r *http.Request) string {
	if a.Header != "" {
		if k := r.Header.Get(a.Header); k != "" {
			return k
		}
	}
	if a.Bearer {
		v := r.Header.Get("Authorization")
		if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
			return strings.TrimSpace(v[7:])
		}
	}
	if a.Query != "" {
		q, _ := url.ParseQuery(r.URL.RawQuery)
		return q.Get(a.Query)
	}
	return ""
}

// checkKey is the provider's answer to a request with a missing or wrong
// key, or nil. want "" accepts any key that is there. The key itself is
// never repeated back (the real OpenAI and DeepSeek bodies show its last
// characters; here they are stars, so no part of a key reaches a log or
// the store).
func checkKey(simp adapters.Simulated, protocol string, r *http.Request, want string) *adapters.SimError {
	d, ok := registry.Describe(protocol)
	a := d.Auth
	if !ok {
		return simp.ErrorResponse(http.StatusUnauthorized, "authentication_error", "invalid API key")
	}
	got := presentedKey(a, r)
	if got == "" {
		return simp.ErrorResponse(a.Missing.Status, a.Missing.Kind, a.Missing.Message)
	}
	if want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1 {
		return nil
	}
	return simp.ErrorResponse(a.Wrong.Status, a.Wrong.Kind, strings.ReplaceAll(a.Wrong.Message, "{key}", stars(got)))
}

// stars stands for a key in an error message: as many stars as it has
// characters, at most 40.
func stars(key string) string { return strings.Repeat("*", min(len(key), 40)) }
