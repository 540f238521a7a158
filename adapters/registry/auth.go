package registry

import "github.com/modelwire/modelwire/adapters"

// Auth is where a protocol's provider reads the API key and how it
// answers a request without one or with a wrong one: one row per
// protocol, so the simulator's --require-key, its key environment and
// any other reader ask here instead of switching on the protocol.
type Auth struct {
	// Env is the environment variable the protocol's official SDK reads
	// its key from.
	Env string
	// Header is the provider's own key header ("" when the key travels
	// only as a bearer token).
	Header string
	// Bearer: Authorization: Bearer KEY is read too (after Header).
	Bearer bool
	// Query is a URL query parameter that carries the key ("" for none).
	Query string
	// Missing and Wrong are the provider's answers (status, error kind,
	// message as adapters.Simulated.ErrorResponse takes them). In Wrong's
	// message, {key} stands for the presented key, which is shown only as
	// stars.
	Missing, Wrong AuthError
}

// AuthError is one authentication answer.
type AuthError struct {
	Status  int
	Kind    string
	Message string
}

const openAIMissing = "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys."

// Google answers no key with 403 and a wrong one with 400
// API_KEY_INVALID, not 401.
const googleMissing = "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."

var openAIAuth = Auth{Env: "OPENAI_API_KEY", Bearer: true,
	Missing: AuthError{401, "invalid_request_error", openAIMissing},
	Wrong:   AuthError{401, "invalid_api_key", "Incorrect API key provided: {key}. You can find your API key at https://platform.openai.com/account/api-keys."}}

var auths = map[string]Auth{
	adapters.OpenAIResponses: openAIAuth,
	adapters.OpenAIChat:      openAIAuth,
	adapters.DeepSeekChat: {Env: "DEEPSEEK_API_KEY", Bearer: true,
		Missing: AuthError{401, "authentication_error", "Authentication Fails (auth header format should be Bearer sk-...)"},
		Wrong:   AuthError{401, "authentication_error", "Authentication Fails, Your api key: **** is invalid"}},
	// Anthropic also takes an OAuth bearer token.
	adapters.AnthropicMessages: {Env: "ANTHROPIC_API_KEY", Header: "x-api-key", Bearer: true,
		Missing: AuthError{401, "authentication_error", "x-api-key header is required"},
		Wrong:   AuthError{401, "authentication_error", "invalid x-api-key"}},
	adapters.Gemini: {Env: "GEMINI_API_KEY", Header: "x-goog-api-key", Query: "key",
		Missing: AuthError{403, "permission_error", googleMissing},
		Wrong:   AuthError{400, "authentication_error", ""}},
	adapters.GeminiInteractions: {Env: "GEMINI_API_KEY", Header: "x-goog-api-key", Query: "key",
		Missing: AuthError{403, "permission_error", googleMissing},
		Wrong:   AuthError{400, "authentication_error", "API key not valid. Please pass a valid API key."}},
}

// AuthOf is the protocol's Auth; ok is false for a protocol that sends
// no requests (claude-code) or an unknown name.
func AuthOf(protocol string) (Auth, bool) {
	a, ok := auths[protocol]
	return a, ok
}
