package adapters

import (
	"strings"
	"testing"
)

func TestDeepSeekResponsesIsStateless(t *testing.T) {
	c, err := CapabilitiesFor(ProviderDeepSeek, OpenAIResponses)
	if err != nil {
		t.Fatal(err)
	}
	req := &Request{History: HistoryPreviousResponse, Sources: []Source{{ID: "t", Role: RoleUser, Text: "x"}}}
	if _, err := c.Check(req); err == nil || !strings.Contains(err.Error(), "stateless") {
		t.Fatalf("want a stateless error, got %v", err)
	}
	req.History = HistoryFull
	req.Sources = append(req.Sources, Source{ID: "skill", Role: RoleDeveloper})
	yes := true
	req.Limits.ParallelToolCalls = &yes
	d, err := c.Check(req)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(d, "\n")
	for _, want := range []string{"treats developer messages as user", "ignores the parallel tool calls switch"} {
		if !strings.Contains(joined, want) {
			t.Errorf("degradations lack %q: %s", want, joined)
		}
	}
}

func TestUnknownCombinations(t *testing.T) {
	if _, err := CapabilitiesFor(ProviderAnthropic, OpenAIChat); err == nil || !strings.Contains(err.Error(), "speaks anthropic-messages") {
		t.Fatalf("got %v", err)
	}
	if _, err := CapabilitiesFor("nope", OpenAIChat); err == nil || !strings.Contains(err.Error(), "unknown provider") {
		t.Fatalf("got %v", err)
	}
	c, _ := CapabilitiesFor(ProviderSim, AnthropicMessages)
	if _, err := c.Check(&Request{History: HistoryPreviousResponse}); err == nil {
		t.Fatal("previous_response_id accepted outside openai-responses")
	}
}

func TestSchemaDegradesOnJSONModeOnly(t *testing.T) {
	c, _ := CapabilitiesFor(ProviderDeepSeek, DeepSeekChat)
	d, err := c.Check(&Request{Output: OutputContract{Mode: OutputJSONSchema, Strict: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(d) != 2 || !strings.Contains(d[0], "strict") || !strings.Contains(d[1], "JSON mode only") {
		t.Fatalf("got %q", d)
	}
}

func TestGenericErrorShapes(t *testing.T) {
	cases := []struct{ body, typ, msg string }{
		{`{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, "requests", "Rate limit reached"},
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}`, "overloaded_error", "Overloaded"},
		{`{"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED"}}`, "RESOURCE_EXHAUSTED", "Resource exhausted"},
		{`{"type":"error","sequence_number":2,"code":"server_error","message":"boom","param":null}`, "server_error", "boom"},
		{`<html>bad gateway</html>`, "http_error", "<html>bad gateway</html>"},
	}
	for _, c := range cases {
		e := GenericError(429, nil, []byte(c.body))
		if e.Type != c.typ || e.Message != c.msg {
			t.Errorf("%s: got type %q message %q", c.body, e.Type, e.Message)
		}
	}
}
