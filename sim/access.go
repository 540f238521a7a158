package sim

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelwire/modelwire/adapters"
)

// KeyEnv names the environment variable each protocol's official SDK
// reads its key from; `serve --require-key` takes the expected keys from
// them.
var KeyEnv = map[string]string{
	adapters.OpenAIResponses:   "OPENAI_API_KEY",
	adapters.OpenAIChat:        "OPENAI_API_KEY",
	adapters.DeepSeekChat:      "DEEPSEEK_API_KEY",
	adapters.AnthropicMessages: "ANTHROPIC_API_KEY",
	adapters.Gemini:            "GEMINI_API_KEY",
}

// presentedKey is the API key a request carries where protocol's provider
// reads it: Authorization: Bearer (OpenAI, DeepSeek), x-api-key (or an
// OAuth bearer token) for Anthropic, x-goog-api-key or ?key= for Gemini.
func presentedKey(protocol string, r *http.Request) string {
	bearer := func() string {
		v := r.Header.Get("Authorization")
		if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
			return strings.TrimSpace(v[7:])
		}
		return ""
	}
	switch protocol {
	case adapters.AnthropicMessages:
		if k := r.Header.Get("x-api-key"); k != "" {
			return k
		}
		return bearer()
	case adapters.Gemini:
		if k := r.Header.Get("x-goog-api-key"); k != "" {
			return k
		}
		q, _ := url.ParseQuery(r.URL.RawQuery)
		return q.Get("key")
	}
	return bearer()
}

// checkKey is the provider's answer to a missing or wrong key, or nil.
// want "" accepts any key that is there. The key itself is never repeated
// back (the real OpenAI and DeepSeek bodies show its last characters;
// here they are stars, so no part of a key reaches a log or the store).
func checkKey(simp adapters.Simulated, protocol, got, want string) *adapters.SimError {
	missing := got == ""
	if !missing && (want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1) {
		return nil
	}
	switch protocol {
	case adapters.OpenAIResponses, adapters.OpenAIChat:
		if missing {
			return simp.ErrorResponse(http.StatusUnauthorized, "invalid_request_error", "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys.")
		}
		return simp.ErrorResponse(http.StatusUnauthorized, "invalid_api_key", "Incorrect API key provided: "+stars(got)+". You can find your API key at https://platform.openai.com/account/api-keys.")
	case adapters.DeepSeekChat:
		if missing {
			return simp.ErrorResponse(http.StatusUnauthorized, "authentication_error", "Authentication Fails (auth header format should be Bearer sk-...)")
		}
		return simp.ErrorResponse(http.StatusUnauthorized, "authentication_error", "Authentication Fails, Your api key: **** is invalid")
	case adapters.AnthropicMessages:
		if missing {
			return simp.ErrorResponse(http.StatusUnauthorized, "authentication_error", "x-api-key header is required")
		}
		return simp.ErrorResponse(http.StatusUnauthorized, "authentication_error", "invalid x-api-key")
	case adapters.Gemini:
		// Google answers no key with 403 and a wrong one with 400
		// API_KEY_INVALID, not 401.
		if missing {
			return simp.ErrorResponse(http.StatusForbidden, "permission_error", "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.")
		}
		return simp.ErrorResponse(http.StatusBadRequest, "authentication_error", "")
	}
	return simp.ErrorResponse(http.StatusUnauthorized, "authentication_error", "invalid API key")
}

// stars stands for a key in an error message: as many stars as it has
// characters, at most 40.
func stars(key string) string { return strings.Repeat("*", min(len(key), 40)) }
