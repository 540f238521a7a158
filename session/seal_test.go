package session

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/transport"
)

// TestSealUpdate: an update carries the session's key nowhere — not in
// the URL's userinfo or query, an error, a header echoing it, a raw
// event, an event's text, a tool call — and the step it was given is
// not written.
func TestSealUpdate(t *testing.T) {
	const key = "sk-seal-canary-123456"
	k := sealFor(transport.Provider{Key: key, BaseURL: "http://gw-user:gw-password-1@gw.example/v1?token=tok-canary-999"})
	events := []adapters.Event{{Type: adapters.EvTextDelta, Delta: "your key is " + key}}
	step := &adapters.Step{Raw: adapters.RawEvent{Data: `{"echo":"` + key + `"}`}, Events: events}
	u := Update{
		URL:      "http://gw-user:gw-password-1@gw.example/v1/chat/completions?token=tok-canary-999",
		Err:      `cannot connect: Post "http://gw-user:***@gw.example/v1?token=tok-canary-999": refused (key ` + key + `)`,
		Header:   http.Header{"X-Echo": {key}, "X-Portkey-Api-Key": {"pk-other-secret"}},
		Step:     step,
		Proposal: &Proposal{Name: "lookup", Arguments: json.RawMessage(`{"q":"` + key + `"}`)},
		Layers:   []LayerResult{{Layer: "transport", Detail: "gw-password-1 refused"}},
	}
	SealUpdate(&u, k)
	b, _ := json.Marshal(u)
	for _, secret := range []string{key, "gw-password-1", "gw-user", "tok-canary-999", "pk-other-secret"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("%q is in the sealed update: %s", secret, b)
		}
	}
	if !strings.Contains(events[0].Delta, key) || !strings.Contains(step.Raw.Data, key) {
		t.Error("sealing wrote the caller's step")
	}
	if u.Step.Events[0].Delta != "your key is [redacted]" {
		t.Errorf("sealed delta %q", u.Step.Events[0].Delta)
	}
}
