package gemini

import (
	"net/http"

	"github.com/modelwire/modelwire/adapters"
)

// The API's errors: google.rpc statuses with their details, over HTTP and in
// a stream.

// ---- errors ---------------------------------------------------------------

type simError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
	Details []any  `json:"details,omitempty"`
}

type simErrorBody struct {
	Error simError `json:"error"`
}

type simViolation struct {
	Field       string `json:"field,omitempty"`
	Description string `json:"description"`
}

type simBadRequest struct {
	Type            string         `json:"@type"`
	FieldViolations []simViolation `json:"fieldViolations"`
}

type simErrorInfo struct {
	Type     string            `json:"@type"`
	Reason   string            `json:"reason"`
	Domain   string            `json:"domain"`
	Metadata map[string]string `json:"metadata"`
}

type simQuotaViolation struct {
	QuotaMetric     string            `json:"quotaMetric"`
	QuotaID         string            `json:"quotaId"`
	QuotaDimensions map[string]string `json:"quotaDimensions"`
}

type simQuotaFailure struct {
	Type       string              `json:"@type"`
	Violations []simQuotaViolation `json:"violations"`
}

type simHelpLink struct {
	Description string `json:"description"`
	URL         string `json:"url"`
}

type simHelp struct {
	Type  string        `json:"@type"`
	Links []simHelpLink `json:"links"`
}

type simRetryInfo struct {
	Type       string `json:"@type"`
	RetryDelay string `json:"retryDelay"`
}

const simTypePrefix = "type.googleapis.com/google.rpc."

// Google's own words for the failures the simulator injects (the
// .error.json captures; protocols.md §6.2).
const (
	simQuotaMessage    = "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits."
	simInternalMessage = "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting"
	simOverloadMessage = "The model is overloaded. Please try again later."
	simTooLargeMessage = "Request payload size exceeds the limit: 20971520 bytes."
	simKeyMessage      = "API key not valid. Please pass a valid API key."
)

// simStatusNames are the google.rpc codes by HTTP status.
var simStatusNames = map[int]string{
	400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
	409: "ABORTED", 429: "RESOURCE_EXHAUSTED", 499: "CANCELLED", 500: "INTERNAL",
	501: "NOT_IMPLEMENTED", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED",
}

// simErrorFor maps a fault kind (or an HTTP status) to Google's error. The
// injected failures get Google's own message; the others keep the
// caller's. Anthropic's 529 does not exist here: overload is 503
// UNAVAILABLE, and a too-large request is Google's 400.
func simErrorFor(status int, kind, message string) simError {
	e := simError{Message: message}
	switch kind {
	case "rate_limit", "rate_limit_error", "RESOURCE_EXHAUSTED":
		e.Code, e.Message = 429, simQuotaMessage
		e.Details = []any{
			simQuotaFailure{Type: simTypePrefix + "QuotaFailure", Violations: []simQuotaViolation{{
				QuotaMetric:     "generativelanguage.googleapis.com/generate_content_free_tier_requests",
				QuotaID:         "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
				QuotaDimensions: map[string]string{"location": "global"},
			}}},
			simHelp{Type: simTypePrefix + "Help", Links: []simHelpLink{{Description: "Learn more about Gemini API quotas", URL: "https://ai.google.dev/gemini-api/docs/rate-limits"}}},
			// The simulator's 429 also says Retry-After: 1.
			simRetryInfo{Type: simTypePrefix + "RetryInfo", RetryDelay: "1s"},
		}
	case "server_error", "INTERNAL":
		e.Code, e.Message = 500, simInternalMessage
	case "api_error":
		e.Code = 500
	case "overloaded", "overloaded_error", "UNAVAILABLE":
		e.Code, e.Message = 503, simOverloadMessage
	case "invalid_request_error", "invalid_request", "INVALID_ARGUMENT":
		e.Code = 400
	case "request_too_large":
		e.Code, e.Message = 400, simTooLargeMessage
	case "authentication_error":
		// The Gemini API answers a bad key with 400 (protocols.md §6.2).
		e.Code, e.Message = 400, simKeyMessage
		e.Details = []any{simErrorInfo{Type: simTypePrefix + "ErrorInfo", Reason: "API_KEY_INVALID", Domain: "googleapis.com",
			Metadata: map[string]string{"service": "generativelanguage.googleapis.com"}}}
	case "permission_error":
		e.Code = 403
	case "not_found_error":
		e.Code = 404
	case "timeout_error":
		e.Code = 504
	default:
		e.Code = status
		if _, ok := simStatusNames[status]; !ok {
			e.Code = 500
		}
	}
	e.Status = simStatusNames[e.Code]
	if e.Message == "" {
		e.Message = http.StatusText(e.Code)
	}
	return e
}

func simErrorResponse(e simError) *adapters.SimError {
	return &adapters.SimError{Status: e.Code, Header: simHeaders(), Body: simPrettyJSON(simErrorBody{Error: e})}
}

// ErrorResponse is the API's HTTP error: {"error":{code,message,status,
// details}} pretty-printed, with Google's headers (no request id). The 429
// carries QuotaFailure, Help and RetryInfo details; Retry-After is the
// caller's to set.
func (Protocol) ErrorResponse(status int, kind, message string) *adapters.SimError {
	return simErrorResponse(simErrorFor(status, kind, message))
}

// ErrorEvent is the in-stream error after a 200: a data chunk holding the
// error object (error_event.sse; go-genai turns it into an APIError). It
// ends the stream.
func (Protocol) ErrorEvent(kind, message string) []adapters.WireEvent {
	e := simErrorFor(0, kind, message)
	e.Details = nil
	return []adapters.WireEvent{{Data: simStreamJSON(simErrorBody{Error: e}), Phase: adapters.PhaseTerminal}}
}

// UnknownEvent is a chunk with a top-level field the API does not define
// (yet): well-formed JSON that go-genai reads as an empty response.
func (Protocol) UnknownEvent() adapters.WireEvent {
	return adapters.WireEvent{Data: `{"heartbeat": {"createTime": "2026-01-01T00:00:00.000000Z"}}`, Phase: adapters.PhaseOther}
}
