package adapters

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// Request ids are "prefix" and two words in 32 hex digits, as fmt's
// %016x%016x writes them (leading zeros kept).
func TestSimHexMatchesFmt(t *testing.T) {
	for _, w := range [][2]uint64{{0, 0}, {1, 0xf}, {0xdeadbeef, 1 << 63}, {^uint64(0), 0x0123456789abcdef}} {
		for _, prefix := range []string{"", "req_"} {
			want := fmt.Sprintf("%s%016x%016x", prefix, w[0], w[1])
			if got := SimHex(prefix, w[0], w[1]); got != want {
				t.Errorf("SimHex(%q, %#x, %#x) = %q, want %q", prefix, w[0], w[1], got, want)
			}
		}
	}
}

// Fixed headers are keyed as net/http writes them, and a header made from
// them can be changed without changing them.
func TestFixedHeaders(t *testing.T) {
	f := NewFixedHeaders("x-ratelimit-limit-requests", "5000", "openai-version", "2020-10-01")
	h := f.Header(1)
	if got := h.Get("X-Ratelimit-Limit-Requests"); got != "5000" {
		t.Fatalf("x-ratelimit-limit-requests = %q, want 5000", got)
	}
	if _, ok := h["X-Ratelimit-Limit-Requests"]; !ok {
		t.Fatalf("keys not canonical: %v", h)
	}
	h.Set("Openai-Version", "changed")
	h.Add("X-Ratelimit-Limit-Requests", "more")
	if got := http.Header(f).Values("Openai-Version"); len(got) != 1 || got[0] != "2020-10-01" {
		t.Errorf("setting the header changed the fixed one: %v", got)
	}
	if got := http.Header(f).Values("X-Ratelimit-Limit-Requests"); len(got) != 1 {
		t.Errorf("adding to the header changed the fixed one: %v", got)
	}
}

// A call's argument text: a JSON string is the raw text it holds, null is
// no text, anything else is sent compact, and what is not JSON (scripted
// on purpose) is sent as it is.
func TestArgumentText(t *testing.T) {
	for args, want := range map[string]string{
		`{"order_id":"O-2048","lines":["L1"]}`:             `{"order_id":"O-2048","lines":["L1"]}`,
		`{ "order_id": "O 2048",` + "\n" + `"n": [1, 2] }`: `{"order_id":"O 2048","n":[1,2]}`,
		`"{\"order_id\": \"O-2"`:                           `{"order_id": "O-2`,
		`null`:                                             ``,
		`{"order_id":`:                                     `{"order_id":`,
		`[1,2]`:                                            `[1,2]`,
	} {
		if got := ArgumentText(json.RawMessage(args)); got != want {
			t.Errorf("ArgumentText(%s) = %q, want %q", args, got, want)
		}
	}
}
