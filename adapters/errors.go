package adapters

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// APIError is a provider error in canonical form: from an HTTP error body
// or from an error event inside a 200 stream.
type APIError struct {
	// Type is the provider's error type or code (e.g. "rate_limit_error",
	// "RESOURCE_EXHAUSTED", "invalid_request_error").
	Type    string `json:"type"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
	// HTTPStatus is 0 for an error that arrived inside a stream.
	HTTPStatus int `json:"http_status,omitempty"`
	// RetryAfterMS is the delay the provider asked for, from Retry-After-Ms
	// or Retry-After; 0 when none was given.
	RetryAfterMS int64 `json:"retry_after_ms,omitempty"`
}

func (e *APIError) Error() string {
	var b strings.Builder
	if e.HTTPStatus != 0 {
		fmt.Fprintf(&b, "HTTP %d ", e.HTTPStatus)
	}
	b.WriteString(e.Type)
	if e.Code != "" && e.Code != e.Type {
		b.WriteString("/" + e.Code)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// RetryAfter reads Retry-After-Ms, then Retry-After (seconds or HTTP date),
// as the official SDKs do. It returns 0 when neither is usable.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// GenericError decodes an error body of any of the shapes the providers
// use: OpenAI/DeepSeek {"error":{message,type,code}}, Anthropic
// {"type":"error","error":{type,message}}, Gemini {"error":{code,message,
// status}}, and the flat Responses stream shape {type:"error",code,message}.
// An unreadable body still yields an error that quotes it.
func GenericError(status int, h http.Header, body []byte) *APIError {
	e := &APIError{HTTPStatus: status}
	if h != nil {
		e.RetryAfterMS = RetryAfter(h, time.Now()).Milliseconds()
	}
	var env struct {
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Message string          `json:"message"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &env) != nil {
		e.Type = "http_error"
		if status == 0 {
			e.Type = "error"
		}
		e.Message = strings.TrimSpace(truncate(string(body), 300))
		if e.Message == "" && status != 0 {
			e.Message = http.StatusText(status)
		}
		return e
	}
	inner := struct {
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Message string          `json:"message"`
		Status  string          `json:"status"`
	}{Type: env.Type, Code: env.Code, Message: env.Message}
	if len(env.Error) > 0 && env.Error[0] == '{' {
		inner.Type, inner.Code = "", nil
		_ = json.Unmarshal(env.Error, &inner)
	} else if len(env.Error) > 0 && env.Error[0] == '"' {
		_ = json.Unmarshal(env.Error, &inner.Message)
	}
	e.Message = inner.Message
	e.Code = rawString(inner.Code)
	switch {
	case inner.Status != "": // Gemini: code is the HTTP number, status the name
		e.Type = inner.Status
		e.Code = ""
	case inner.Type != "" && inner.Type != "error":
		e.Type = inner.Type
	case e.Code != "":
		e.Type = e.Code
	default:
		e.Type = "error"
	}
	return e
}

// rawString turns a JSON string or number into text; null becomes "".
func rawString(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// cut at a rune boundary
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// RateLimitHeaders lists the rate-limit and retry headers of a response as
// "name: value", sorted: OpenAI's x-ratelimit-*, Anthropic's
// anthropic-ratelimit-*, Retry-After, Retry-After-Ms and x-should-retry
// (protocols.md §6.4). The application paces itself by them (13.7.2).
func RateLimitHeaders(h http.Header) []string {
	var out []string
	for k, vs := range h {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "x-ratelimit-") || strings.HasPrefix(lk, "anthropic-ratelimit-") ||
			lk == "retry-after" || lk == "retry-after-ms" || lk == "x-should-retry" {
			out = append(out, lk+": "+strings.Join(vs, ", "))
		}
	}
	sort.Strings(out)
	return out
}
