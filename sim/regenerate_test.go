package sim

import (
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
)

// The last user message is read where each protocol puts it; a request
// past the script answers only when it is a regeneration.
func TestRegenerationTurn(t *testing.T) {
	lead := session.RegenerationLead + " at the domain layer: cap"
	bodies := map[string]string{
		adapters.OpenAIResponses:   `{"input":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"{}"}]},{"type":"message","role":"user","content":[{"type":"input_text","text":"` + lead + `"}]}]}`,
		adapters.OpenAIChat:        `{"messages":[{"role":"assistant","content":"{}"},{"role":"user","content":[{"type":"text","text":"` + lead + `"}]}]}`,
		adapters.DeepSeekChat:      `{"messages":[{"role":"assistant","content":"{}"},{"role":"user","content":"` + lead + `"}]}`,
		adapters.AnthropicMessages: `{"messages":[{"role":"assistant","content":[{"type":"text","text":"{}"}]},{"role":"user","content":[{"type":"text","text":"` + lead + `"}]}]}`,
		adapters.Gemini:            `{"contents":[{"role":"model","parts":[{"text":"{}"}]},{"role":"user","parts":[{"text":"` + lead + `"}]}]}`,
	}
	sc := &session.Scenario{Script: []adapters.ModelTurn{{Stop: adapters.StopToolCall}, {Stop: adapters.StopFinal}}}
	for p, body := range bodies {
		mt, ok := regenerationTurn(sc, 2, p, []byte(body))
		if !ok || mt.Stop != adapters.StopFinal {
			t.Errorf("%s: a regeneration was not answered with the final turn", p)
		}
		if _, ok := regenerationTurn(sc, 3, p, []byte(body)); ok {
			t.Errorf("%s: a second regeneration was answered", p)
		}
	}
	if _, ok := regenerationTurn(sc, 2, adapters.OpenAIChat, []byte(`{"messages":[{"role":"user","content":"more please"}]}`)); ok {
		t.Error("a request past the script that is not a regeneration was answered")
	}
}
