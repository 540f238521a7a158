package vcr

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/jsonschema"
)

func tape(t *testing.T) *Tape {
	t.Helper()
	body := func(s string) any {
		v, err := jsonschema.ParseJSON([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	return &Tape{SessionID: "s1", Protocol: adapters.OpenAIChat, served: map[int]int{}, turns: []turn{
		{n: 1, path: "/v1/chat/completions", body: body(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`),
			attempts: []response{{status: 429, events: []rawAt{{raw: adapters.RawEvent{Data: `{"error":{"message":"slow down"}}`}}}},
				{status: 200, events: []rawAt{{raw: adapters.RawEvent{Data: `{"id":"one"}`}}}}}},
		{n: 2, path: "/v1/chat/completions", body: body(`{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"a"},{"role":"user","content":"more"}]}`),
			attempts: []response{{status: 200, stream: true, events: []rawAt{{raw: adapters.RawEvent{Data: `{"id":"two"}`}}, {raw: adapters.RawEvent{Data: "[DONE]"}}}}}},
	}}
}

// Requests are matched semantically; a mismatch names the turn whose
// history is as long as the request's and its first differing field.
func TestMatch(t *testing.T) {
	tp := tape(t)
	if n, miss := tp.Match("/chat/completions", []byte(`{"messages":[{"content":"hi","role":"user"}], "model":"m"}`)); n != 1 || miss != nil {
		t.Errorf("turn 1 in another key order: %d %v", n, miss)
	}
	_, miss := tp.Match("/v1/chat/completions", []byte(`{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"a"},{"role":"user","content":"less"}]}`))
	if miss == nil || miss.Turn != 2 || miss.Path != "messages/2/content" || miss.Recorded != "more" || miss.Sent != "less" {
		t.Errorf("mismatch %+v, want turn 2 messages/2/content more → less", miss)
	}
	if _, miss := tp.Match("/v1/messages", []byte(`{}`)); miss == nil || miss.Path != "(url path)" {
		t.Errorf("another path: %+v", miss)
	}
	// A member the recording never had, and one set to null: the message
	// tells them apart.
	_, miss = tp.Match("/v1/chat/completions", []byte(`{"model":"m","temperature":0,"messages":[{"role":"user","content":"hi"}]}`))
	if miss == nil || !strings.Contains(miss.Error(), "differs first at temperature (recorded nothing, sent 0)") {
		t.Errorf("an added member: %v", miss)
	}
	_, miss = tp.Match("/v1/chat/completions", []byte(`{"model":null,"messages":[{"role":"user","content":"hi"}]}`))
	if miss == nil || !strings.Contains(miss.Error(), `differs first at model (recorded "m", sent null)`) {
		t.Errorf("a member set to null: %v", miss)
	}
}

// A retried turn answers as it went: the 429, then the answer; a stream
// goes out as SSE; a mismatch is a 409 in the provider's error shape.
func TestHandler(t *testing.T) {
	srv := httptest.NewServer(tape(t).Handler(Options{Full: true}))
	defer srv.Close()
	var header http.Header
	post := func(body string) (int, string) {
		resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		header = resp.Header
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return resp.StatusCode, b.String()
	}
	turn1 := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	if code, _ := post(turn1); code != 429 {
		t.Errorf("first ask of turn 1: %d, want the recorded 429", code)
	}
	if code, body := post(turn1); code != 200 || body != `{"id":"one"}` {
		t.Errorf("second ask: %d %s", code, body)
	}
	if code, body := post(`{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"a"},{"role":"user","content":"more"}]}`); code != 200 ||
		body != "data: {\"id\":\"two\"}\n\ndata: [DONE]\n\n" {
		t.Errorf("turn 2: %d %q", code, body)
	}
	if code, body := post(`{"model":"other","messages":[{"role":"user","content":"hi"}]}`); code != 409 ||
		!strings.Contains(body, `"param":"model"`) || !strings.Contains(body, `"code":"replay_mismatch"`) {
		t.Errorf("another model: %d %s", code, body)
	}
	// Asking again would get the same mismatch: the SDKs are told not to.
	if got := header.Get("x-should-retry"); got != "false" {
		t.Errorf("the mismatch says x-should-retry %q, want false", got)
	}
}
