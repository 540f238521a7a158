package openairesponses

import (
	"net/http"
	"strings"

	"github.com/modelwire/modelwire/adapters"
)

// The API's HTTP errors and its in-stream error event.

// simErrorBody is the API's error body, pretty-printed as it sends it.
// param and code are raw JSON (a string or null).
func simErrorBody(message, typ, param, code string) []byte {
	return []byte("{\n  \"error\": {\n    \"message\": " + adapters.JSONString(message) + ",\n    \"type\": " + adapters.JSONString(typ) +
		",\n    \"param\": " + param + ",\n    \"code\": " + code + "\n  }\n}\n")
}

func simNullable(s string) string {
	if s == "" {
		return "null"
	}
	return adapters.JSONString(s)
}

// simError is an HTTP error with x-request-id.
func simError(status int, message, typ, param, code string) *adapters.SimError {
	h := http.Header{}
	h.Set("x-request-id", simRequestID())
	return &adapters.SimError{Status: status, Header: h, Body: simErrorBody(message, typ, simNullable(param), simNullable(code))}
}

// ErrorResponse is the API's HTTP error for a fault. The simulator's kinds
// map to OpenAI's names: rate_limit → 429 type "requests" code
// rate_limit_exceeded (with the rate-limit headers spent; the server adds
// Retry-After); server_error and api_error → 500 server_error;
// overloaded_error → 503 service_unavailable_error (OpenAI has no 529);
// invalid_request_error → 400, with param/code previous_response_not_found
// for the server's "Previous response with id '…' not found.";
// request_too_large → 413.
func (Protocol) ErrorResponse(status int, kind, message string) *adapters.SimError {
	typ, param, code, def := "invalid_request_error", "", "", http.StatusBadRequest
	switch kind {
	case "rate_limit", "rate_limit_exceeded", "rate_limit_error":
		typ, code, def = "requests", "rate_limit_exceeded", http.StatusTooManyRequests
	case "insufficient_quota":
		typ, code, def = "insufficient_quota", "insufficient_quota", http.StatusTooManyRequests
	case "server_error", "api_error":
		typ, def = "server_error", http.StatusInternalServerError
	case "overloaded_error", "overloaded", "service_unavailable_error":
		typ, def = "service_unavailable_error", http.StatusServiceUnavailable
	case "request_too_large":
		code, def = "request_too_large", http.StatusRequestEntityTooLarge
	case "authentication_error", "invalid_api_key":
		code, def = "invalid_api_key", http.StatusUnauthorized
	case "not_found_error":
		def = http.StatusNotFound
	case "invalid_request_error", "":
		if strings.HasPrefix(message, "Previous response with id ") {
			param, code = "previous_response_id", "previous_response_not_found"
		}
	default:
		typ = kind
	}
	if status == 0 || status == 529 {
		status = def
	}
	e := simError(status, message, typ, param, code)
	if status == http.StatusTooManyRequests {
		simRateLimits(e.Header, true)
	}
	return e
}

// simStreamErrorType maps a fault kind to the nested error event's type and
// code as seen live: service_unavailable_error with code null (vercel/ai
// #20022), too_many_requests (openai/openai-dotnet#881), server_error with
// code null (vercel/ai openai-error-null-code.1.chunks.txt),
// insufficient_quota (openai-error.1.chunks.txt).
func simStreamErrorType(kind string) (typ, code string) {
	switch kind {
	case "overloaded_error", "overloaded", "service_unavailable_error":
		return "service_unavailable_error", ""
	case "rate_limit", "rate_limit_error", "rate_limit_exceeded", "too_many_requests":
		return "too_many_requests", "too_many_requests"
	case "server_error", "api_error", "":
		return "server_error", ""
	case "insufficient_quota":
		return "insufficient_quota", "insufficient_quota"
	}
	return kind, ""
}

// ErrorEvent is the in-stream error after a 200, in the nested shape the
// API sends (see the top of the file). It ends the stream: a terminal
// event. Its sequence_number is a placeholder, 0: ErrorEvent does not know
// where the server puts it, and Renumber gives it its place.
func (Protocol) ErrorEvent(kind, message string) []adapters.WireEvent {
	typ, code := simStreamErrorType(kind)
	inner := `{"type":` + adapters.JSONString(typ) + `,"code":` + simNullable(code) + `,"message":` + adapters.JSONString(message) + `,"param":null}`
	return []adapters.WireEvent{{Event: "error", Data: simEnvelope("error", 0, simMember{"error", inner}), Phase: adapters.PhaseTerminal}}
}

// UnknownPrevious is the API's answer to a previous_response_id it does
// not have (never issued, expired, or created with store:false).
func (p Protocol) UnknownPrevious(id string) *adapters.SimError {
	return p.ErrorResponse(http.StatusBadRequest, "invalid_request_error", "Previous response with id '"+id+"' not found.")
}

// UnmatchedResult is the API's answer when a function_call_output answers
// no function_call of the chain the request continues.
func (Protocol) UnmatchedResult(callID string) *adapters.SimError {
	return simInvalid("No tool call found for function call output with call_id "+callID+".", "input", "")
}
