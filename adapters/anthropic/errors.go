package anthropic

import (
	"net/http"

	"github.com/modelwire/modelwire/adapters"
)

// The API's HTTP errors and its in-stream error event.

// errorType maps the simulator's fault kinds (and Anthropic's own names) to
// error.type and the status it goes with (protocols.md §6.2).
func errorType(status int, kind string) (string, int) {
	switch kind {
	case "rate_limit", "rate_limit_error":
		return "rate_limit_error", 429
	case "server_error", "api_error":
		return "api_error", 500
	case "overloaded", "overloaded_error":
		return "overloaded_error", 529
	case "invalid_request_error", "invalid_request":
		return "invalid_request_error", 400
	case "request_too_large":
		return "request_too_large", 413
	case "authentication_error":
		return kind, 401
	case "billing_error":
		return kind, 402
	case "permission_error":
		return kind, 403
	case "not_found_error":
		return kind, 404
	case "timeout_error":
		return kind, 504
	}
	if t := errorTypeForStatus(status); t != "" {
		return t, status
	}
	return "api_error", 500
}

func errorBody(typ, message, requestID string) []byte {
	s := `{"type":"error","error":{"type":` + adapters.JSONString(typ) + `,"message":` + adapters.JSONString(message) + `}`
	if requestID != "" {
		s += `,"request_id":` + adapters.JSONString(requestID)
	}
	return []byte(s + "}")
}

// ErrorResponse is the API's HTTP error: the error body with request_id and
// the same id in the request-id header. The status is the caller's (the
// kind's own when it is 0); Retry-After is the caller's to set (the sim
// server sets it on its 429).
func (protocol) ErrorResponse(status int, kind, message string) *adapters.SimError {
	typ, def := errorType(status, kind)
	if status == 0 {
		status = def
	}
	rid := newRequestID()
	h := http.Header{}
	h.Set("request-id", rid)
	return &adapters.SimError{Status: status, Header: h, Body: errorBody(typ, message, rid)}
}

// ErrorEvent is the in-stream error after a 200: event: error with
// {"type":"error","error":{…}} (protocols.md §3.4, §6.3). It ends the
// stream, so it is a terminal event.
func (protocol) ErrorEvent(kind, message string) []adapters.WireEvent {
	typ, _ := errorType(0, kind)
	return []adapters.WireEvent{{Event: "error", Data: string(errorBody(typ, message, "")), Phase: adapters.PhaseTerminal}}
}

// UnknownEvent is an event type the API does not define (yet): well formed,
// its JSON type equal to its event name, as the docs say new types will be
// ("your code should handle unknown event types gracefully").
func (protocol) UnknownEvent() adapters.WireEvent {
	return adapters.WireEvent{Event: "message_progress", Data: `{"type":"message_progress","progress":{"output_tokens":8}}`, Phase: adapters.PhaseOther}
}
