package adapters

// What two protocols of one provider share, for their descriptors.

const openAIMissing = "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys."

// OpenAIAuth is OpenAI's key handling (Responses and Chat Completions).
var OpenAIAuth = Auth{Env: "OPENAI_API_KEY", Bearer: true,
	Missing: AuthError{401, "invalid_request_error", openAIMissing},
	Wrong:   AuthError{401, "invalid_api_key", "Incorrect API key provided: {key}. You can find your API key at https://platform.openai.com/account/api-keys."}}

// OpenAIModels is OpenAI's GET /v1/models.
var OpenAIModels = ModelsEndpoint{Path: "/v1/models", Shape: ModelsShapeOpenAI, OwnedBy: "system", Created: true,
	NotFound: "The model '{id}' does not exist"}

// GoogleHost is the Gemini API's origin (generateContent and Interactions).
const GoogleHost = "https://generativelanguage.googleapis.com"

// GoogleAuth is the Gemini API's key handling: no key is 403, a wrong one
// 400 API_KEY_INVALID, not 401.
func GoogleAuth(wrong string) Auth {
	return Auth{Env: "GEMINI_API_KEY", Header: "x-goog-api-key", Query: "key",
		Missing: AuthError{403, "permission_error", "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."},
		Wrong:   AuthError{400, "authentication_error", wrong}}
}

// GeminiModels is the Gemini API's GET /v1beta/models.
var GeminiModels = ModelsEndpoint{Path: "/v1beta/models", Shape: ModelsShapeGemini, Methods: true,
	NotFound: "models/{model} is not found for API version v1beta."}
