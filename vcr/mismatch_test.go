package vcr

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
)

// TestMismatchInEveryProtocolsShape: a mismatch is a 409 the SDKs do not
// retry, in the protocol's own error shape (its simulator's), with the
// message an SDK shows and the mismatch beside it; OpenAI's shape names
// it by code and param.
func TestMismatchInEveryProtocolsShape(t *testing.T) {
	m := &Mismatch{Turn: 1, Path: "model", Recorded: "m", Sent: "other"}
	for _, name := range append(registry.Protocols, "unknown-protocol") {
		rec := httptest.NewRecorder()
		(&Tape{SessionID: "s1", Protocol: name}).writeMismatch(rec, m)
		body := rec.Body.String()
		var v map[string]any
		if rec.Code != 409 || rec.Header().Get("x-should-retry") != "false" || json.Unmarshal([]byte(body), &v) != nil {
			t.Errorf("%s: %d %q %s", name, rec.Code, rec.Header().Get("x-should-retry"), body)
			continue
		}
		if v["modelwire_replay"] == nil || !strings.Contains(body, "modelwire replay of session s1: ") {
			t.Errorf("%s: the mismatch or its message is missing: %s", name, body)
		}
		if d, ok := registry.Describe(name); ok && d.Provider == adapters.ProviderOpenAI &&
			(!strings.Contains(body, `"code":"replay_mismatch"`) || !strings.Contains(body, `"param":"model"`)) {
			t.Errorf("%s: OpenAI's shape names the mismatch by code and param: %s", name, body)
		}
	}
}
