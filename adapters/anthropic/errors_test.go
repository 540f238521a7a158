package anthropic

import (
	"net/http"
	"testing"
)

// Error bodies as ANT-DOC-ERR documents them:
// {"type":"error","error":{"type","message"},"request_id"} (protocols.md §6.1, §6.2).
func TestDecodeError(t *testing.T) {
	for _, c := range []struct {
		status     int
		header     http.Header
		body       string
		typ, msg   string
		retryAfter int64
	}{
		{400, nil, `{"type":"error","error":{"type":"invalid_request_error","message":"messages: roles must alternate between \"user\" and \"assistant\""},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`,
			"invalid_request_error", `messages: roles must alternate between "user" and "assistant"`, 0},
		{401, nil, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_1"}`, "authentication_error", "invalid x-api-key", 0},
		{402, nil, `{"type":"error","error":{"type":"billing_error","message":"Your credit balance is too low"},"request_id":"req_2"}`, "billing_error", "Your credit balance is too low", 0},
		{403, nil, `{"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified resource."}}`, "permission_error", "Your API key does not have permission to use the specified resource.", 0},
		{404, nil, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"}}`, "not_found_error", "model: claude-nope", 0},
		// 413 comes from Cloudflare, before the API: not Anthropic's JSON.
		{413, nil, `<html><head><title>413 Request Entity Too Large</title></head></html>`, "request_too_large", "<html><head><title>413 Request Entity Too Large</title></head></html>", 0},
		{429, http.Header{"Retry-After": {"12"}, "Anthropic-Ratelimit-Requests-Remaining": {"0"}}, `{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your per-minute rate limit"},"request_id":"req_3"}`,
			"rate_limit_error", "Number of requests has exceeded your per-minute rate limit", 12000},
		{500, nil, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`, "api_error", "Internal server error", 0},
		{504, nil, ``, "timeout_error", "Gateway Timeout", 0},
		{529, http.Header{"Retry-After": {"1.5"}}, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_4"}`, "overloaded_error", "Overloaded", 1500},
		{529, nil, ``, "overloaded_error", "", 0},
	} {
		e := New().DecodeError(c.status, c.header, []byte(c.body))
		if e.HTTPStatus != c.status || e.Type != c.typ || e.Message != c.msg || e.RetryAfterMS != c.retryAfter {
			t.Errorf("%d %.40s: got %+v", c.status, c.body, e)
		}
	}
}
