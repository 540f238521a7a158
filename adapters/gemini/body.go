package gemini

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
)

// DecodeBody decodes a whole generateContent response. A JSON array is the
// body of streamGenerateContent without alt=sse: each element is a chunk,
// decoded in order as a stream would be.
func (Protocol) DecodeBody(body []byte) []adapters.Event {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimSpace(body)
	d := &decoder{}
	var out []adapters.Event
	if len(trimmed) > 0 && trimmed[0] == '[' && gjson.ValidBytes(trimmed) {
		gjson.ParseBytes(trimmed).ForEach(func(_, el gjson.Result) bool {
			out = append(out, d.Decode(adapters.RawEvent{Data: el.Raw})...)
			return true
		})
	} else {
		out = append(out, d.Decode(adapters.RawEvent{Data: string(trimmed)})...)
	}
	return append(out, d.Finish()...)
}

// DecodeError decodes Google's error body {"error":{"code","message",
// "status","details"}} (also wrapped in an array, as streamGenerateContent
// without alt=sse sends it). Type is the google.rpc status name (e.g.
// RESOURCE_EXHAUSTED); Code is the ErrorInfo reason when details carry one
// (e.g. API_KEY_INVALID). The retry delay comes from Retry-After-Ms or
// Retry-After, else from a google.rpc.RetryInfo detail's retryDelay.
func (Protocol) DecodeError(status int, h http.Header, body []byte) *adapters.APIError {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	root := gjson.ParseBytes(bytes.TrimSpace(body))
	if root.IsArray() {
		root = root.Get("0")
	}
	errv := root.Get("error")
	if !gjson.ValidBytes(bytes.TrimSpace(body)) || !errv.IsObject() {
		return adapters.GenericError(status, h, body)
	}
	e := googleError(errv)
	e.HTTPStatus = status
	if h != nil {
		e.RetryAfterMS = adapters.RetryAfter(h, time.Now()).Milliseconds()
	}
	if e.RetryAfterMS == 0 {
		e.RetryAfterMS = retryDelayMS(errv.Get("details"))
	}
	if e.Message == "" {
		e.Message = http.StatusText(status)
	}
	return e
}

// googleError reads the inner object of {"error":{…}}. Without an
// ErrorInfo reason, Code is the numeric code (useful for errors inside a
// stream, which have no HTTP status of their own).
func googleError(errv gjson.Result) *adapters.APIError {
	e := &adapters.APIError{
		Type:    errv.Get("status").String(),
		Message: errv.Get("message").String(),
	}
	if e.Type == "" {
		e.Type = "error"
	}
	if errv.Type == gjson.String { // {"error": "…"}: not Google's shape, but say it
		e.Message = errv.Str
	}
	errv.Get("details").ForEach(func(_, d gjson.Result) bool {
		if strings.HasSuffix(typeURL(d), "google.rpc.ErrorInfo") {
			e.Code = d.Get("reason").String()
			return false
		}
		return true
	})
	if e.Code == "" {
		if c := errv.Get("code"); c.Exists() && c.Raw != "0" {
			e.Code = c.String()
		}
	}
	return e
}

// retryDelayMS reads RetryInfo.retryDelay, a protobuf Duration in JSON
// form such as "36s" or "3.957525076s".
func retryDelayMS(details gjson.Result) int64 {
	var ms int64
	details.ForEach(func(_, d gjson.Result) bool {
		if !strings.HasSuffix(typeURL(d), "google.rpc.RetryInfo") {
			return true
		}
		v := strings.TrimSuffix(d.Get("retryDelay").String(), "s")
		if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
			ms = int64(s * 1000)
		}
		return false
	})
	return ms
}

// typeURL is a detail's "@type" (gjson paths starting with '@' are
// modifiers, so the key is matched by iterating).
func typeURL(detail gjson.Result) string {
	var t string
	detail.ForEach(func(k, v gjson.Result) bool {
		if k.Str == "@type" {
			t = v.String()
			return false
		}
		return true
	})
	return t
}
