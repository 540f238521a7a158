package vcr

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
)

// chatCassette is a cassette of two chat exchanges, as recorded.
func chatCassette(t *testing.T, bodies ...string) *Cassette {
	t.Helper()
	c := newCassette("chat")
	for _, b := range bodies {
		b := b
		c.turns = append(c.turns, &turn{attempts: []*exchange{{line: attemptLine{Method: "POST",
			URL: "http://127.0.0.1:1/v1/chat/completions", RequestBody: &b, StatusCode: 200}}}})
	}
	return c
}

func sentChat(body string, ignore [][]string) *canonical {
	return canonicalize("POST", "/v1/chat/completions", http.Header{}, []byte(body), ignore)
}

// Requests match semantically (key order, whitespace, the volatile
// members); a miss names the exchange whose conversation is as long, the
// first differing pointer and both values, and tells an added member from
// a null one.
func TestMatch(t *testing.T) {
	ign, _ := ignorePointers(append(DefaultIgnore, "/messages/*/name"))
	one := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	two := `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"a"},{"role":"user","content":"more"}]}`
	c := chatCassette(t, one, two)
	if tr, miss := c.match(sentChat(`{"messages":[{"content":"hi", "role":"user"}], "model":"m", "metadata":{"run":"42"}}`, ign), ign); tr != c.turns[0] || miss != nil {
		t.Errorf("turn 1 in another key order, with metadata: %v", miss)
	}
	if tr, _ := c.match(sentChat(`{"model":"m","messages":[{"role":"user","content":"hi","name":"x"}]}`, ign), ign); tr != c.turns[0] {
		t.Errorf("an ignored pointer still counted")
	}
	_, miss := c.match(sentChat(strings.Replace(two, "more", "less", 1), ign), ign)
	if miss == nil || miss.Exchange != 2 || miss.Pointer != "/messages/2/content" || miss.Recorded != "more" || miss.Sent != "less" {
		t.Fatalf("mismatch %+v, want exchange 2 /messages/2/content more → less", miss)
	}
	if !strings.Contains(miss.Error(), `differs first at /messages/2/content (recorded "more", sent "less")`) {
		t.Errorf("the message: %s", miss)
	}
	_, miss = c.match(sentChat(`{"model":"m","temperature":0,"messages":[{"role":"user","content":"hi"}]}`, ign), ign)
	if miss == nil || !strings.Contains(miss.Error(), "differs first at /temperature (recorded nothing, sent 0)") {
		t.Errorf("an added member: %v", miss)
	}
	_, miss = c.match(sentChat(`{"model":null,"messages":[{"role":"user","content":"hi"}]}`, ign), ign)
	if miss == nil || !strings.Contains(miss.Error(), `(recorded "m", sent null)`) {
		t.Errorf("a member set to null: %v", miss)
	}
}

// A tool result is named by its call_id, whatever the protocol calls the
// field.
func TestMatchToolResultByCallID(t *testing.T) {
	rec := `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_1","content":"42"}]}`
	c := chatCassette(t, rec)
	_, miss := c.match(sentChat(strings.Replace(rec, `"42"`, `"43"`, 1), nil), nil)
	if miss == nil || !strings.HasPrefix(miss.Pointer, "/tool_results/call_1") || !strings.Contains(miss.Error(), `recorded "42", sent "43"`) {
		t.Errorf("a changed tool result: %+v", miss)
	}
}

// A long string shows where it parts from the other.
func TestValueTextShowsTheDifference(t *testing.T) {
	a := strings.Repeat("甲", 400) + "recorded tail"
	b := strings.Repeat("甲", 400) + "sent tail"
	if got := valueText(a, b); !strings.Contains(got, "recorded tail") || !strings.HasPrefix(got, "…") {
		t.Errorf("valueText: %s", got)
	}
}

func TestParseMode(t *testing.T) {
	for i, n := range modeNames {
		if m, err := ParseMode(strings.ToUpper(n)); err != nil || m != Mode(i) || m.String() != n {
			t.Errorf("%s: %v %v", n, m, err)
		}
	}
	if _, err := ParseMode("rewind"); err == nil || !strings.Contains(err.Error(), "replay, record, update, hybrid, live") {
		t.Errorf("a bad mode: %v", err)
	}
}

// A cassette that is not one is refused with the line at fault.
func TestReadBadCassette(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "no session line"},
		{"{}\n", "line 1: not a modelwire session"},
		{`{"type":"modelwire.export","format":1}` + "\n" + `{"type":"attempt","turn":1,"attempt":1}` + "\n" + `not json`, "line 3: not a JSON object"},
		{`{"type":"modelwire.export","format":9}`, "export format 9"},
		{`{"type":"modelwire.export","format":1}` + "\n" + `{"type":"session","id":"a"}` + "\n" + `{"type":"session","id":"b"}`, "line 3: a second session"},
	} {
		if _, err := Read(strings.NewReader(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
}

// A miss is a 409 the SDKs do not retry, in each protocol's own error
// shape (its simulator's), with the message an SDK shows and the mismatch
// beside it; OpenAI's shape names it by code and param.
func TestMismatchInEveryProtocolsShape(t *testing.T) {
	m := &Mismatch{Cassette: "c", Exchange: 1, Nearest: "POST /v1/x", Pointer: "/model", Recorded: "m", Sent: "other"}
	for _, name := range append(registry.Protocols, "unknown-protocol") {
		req := httptest.NewRequest("POST", "/v1/x", nil)
		resp := mismatchResponse(req, name, m)
		b, _ := io.ReadAll(resp.Body)
		body := string(b)
		var v map[string]any
		if resp.StatusCode != 409 || resp.Header.Get("x-should-retry") != "false" || json.Unmarshal(b, &v) != nil {
			t.Errorf("%s: %d %q %s", name, resp.StatusCode, resp.Header.Get("x-should-retry"), body)
			continue
		}
		if v["modelwire_replay"] == nil || !strings.Contains(body, `modelwire vcr: cassette c has no request like this one`) {
			t.Errorf("%s: the mismatch or its message is missing: %s", name, body)
		}
		if d, ok := registry.Describe(name); ok && d.Provider == adapters.ProviderOpenAI &&
			(!strings.Contains(body, `"code":"replay_mismatch"`) || !strings.Contains(body, `"param":"/model"`)) {
			t.Errorf("%s: OpenAI's shape names the mismatch by code and param: %s", name, body)
		}
	}
}
