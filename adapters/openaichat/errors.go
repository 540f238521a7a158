package openaichat

import (
	"net/http"
	"strings"

	"github.com/modelwire/modelwire/adapters"
)

// The providers' HTTP and in-stream errors, in each dialect's shape.

// ---- errors
// -------------------------------------------------------------------

// apiError is one error as {"error":{message,type,param,code}}.
type apiError struct {
	status       int
	message, typ string
	param, code  string // "" is null
}

// errorKind maps the simulator's fault kinds to the provider's status, type
// and code (protocols.md §6.2). OpenAI's 429 is type "requests" with code
// rate_limit_exceeded, its 500 server_error; DeepSeek repeats the type as
// the code, as its 400s do.
func (p protocol) errorKind(status int, kind, message string) apiError {
	e := apiError{status: status, message: message}
	def := 0
	switch kind {
	case "rate_limit", "rate_limit_error", "rate_limit_exceeded", "requests":
		def, e.typ, e.code = 429, "requests", "rate_limit_exceeded"
		if p.deepseek {
			e.typ, e.code = "rate_limit_error", "rate_limit_error"
		}
	case "server_error", "api_error":
		def, e.typ = 500, "server_error"
	case "overloaded_error", "overloaded":
		def, e.typ = 503, "server_error"
	case "request_too_large":
		def, e.typ, e.code = 413, "invalid_request_error", "request_too_large"
	case "authentication_error", "invalid_api_key":
		def, e.typ, e.code = 401, "invalid_request_error", "invalid_api_key"
		if p.deepseek {
			e.typ, e.code = "authentication_error", "invalid_request_error"
		}
	default: // invalid_request_error and anything unknown
		def, e.typ = 400, "invalid_request_error"
	}
	if e.status == 0 {
		e.status = def
	}
	if p.deepseek && e.code == "" {
		e.code = e.typ
	}
	return e
}

// body renders the error body: OpenAI indents it by four spaces (with a
// final newline), DeepSeek sends it compact.
func (p protocol) errorBody(e apiError, indent bool) []byte {
	null := func(s string) string {
		if s == "" {
			return "null"
		}
		return adapters.JSONString(s)
	}
	fields := []string{`"message":` + adapters.JSONString(e.message), `"type":` + adapters.JSONString(e.typ), `"param":` + null(e.param), `"code":` + null(e.code)}
	if !indent {
		return []byte(`{"error":{` + strings.Join(fields, ",") + `}}`)
	}
	for i, f := range fields {
		fields[i] = "        " + strings.Replace(f, `":`, `": `, 1)
	}
	return []byte("{\n    \"error\": {\n" + strings.Join(fields, ",\n") + "\n    }\n}\n")
}

func (p protocol) simError(e apiError) *adapters.SimError {
	h := http.Header{}
	h.Set(p.requestIDHeader(), p.requestID())
	return &adapters.SimError{Status: e.status, Header: h, Body: p.errorBody(e, !p.deepseek)}
}

// ErrorResponse is the provider's HTTP error with its request id header.
// The status is the caller's (the kind's own when 0); Retry-After is the
// caller's to set (the sim server sets it on its 429).
func (p protocol) ErrorResponse(status int, kind, message string) *adapters.SimError {
	return p.simError(p.errorKind(status, kind, message))
}

// ErrorEvent is the in-stream error after a 200: a data payload with a
// top-level error object, then the end of the body (protocols.md §6.3,
// testdata chat_error_event.sse). It ends the stream: a terminal event.
func (p protocol) ErrorEvent(kind, message string) []adapters.WireEvent {
	e := p.errorKind(0, kind, message)
	return []adapters.WireEvent{{Data: string(p.errorBody(e, false)), Phase: adapters.PhaseTerminal}}
}

// UnknownEvent is a well-formed payload that is not a chunk, as a newer
// server (or a proxy) might send: decoders must skip it (openai-go's
// accumulator refuses it, since its id is not the response's).
func (protocol) UnknownEvent() adapters.WireEvent {
	return adapters.WireEvent{Data: `{"object":"chat.completion.progress","progress":{"completion_tokens":8}}`, Phase: adapters.PhaseOther}
}
