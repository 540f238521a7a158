package registry

import (
	"bytes"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
)

// malformed are event payloads that are not JSON. Every decoder must
// report each as one malformed_event diagnostic on one line, and go on.
var malformed = map[string]string{
	"bad escape":           `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\qb"}}`,
	"short unicode escape": `{"type":"x","delta":"\u12"}`,
	"escape at the end":    `{"type":"x","delta":"abc\`,
	"control byte":         "{\"type\":\"x\",\"delta\":\"a\x01b\"}",
	"truncated number":     `{"type":"x","sequence_number":1.}`,
	"truncated exponent":   `{"type":"x","index":1e}`,
	"bare minus":           `{"type":"x","index":-}`,
	"leading zero":         `{"type":"x","index":01}`,
	"truncated object":     `{"type":"x","delta":{"text":"hi"}`,
	"trailing comma":       `{"type":"x",}`,
	"trailing bytes":       `{"type":"x"} x`,
	"deep and unbalanced":  `{"type":"x","a":` + strings.Repeat("[", 50000) + strings.Repeat("]", 49999) + `}`,
}

func TestMalformedPayloads(t *testing.T) {
	for _, name := range Protocols {
		p, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for what, payload := range malformed {
			diags := malformedDiags(t, p, payload)
			if len(diags) != 1 {
				t.Errorf("%s, %s: %d malformed_event diagnostics, want 1", name, what, len(diags))
				continue
			}
			if d := diags[0]; !strings.Contains(d, "JSON") || strings.Contains(d, "\n") {
				t.Errorf("%s, %s: diagnostic %q does not say on one line that the data is not JSON", name, what, d)
			}
		}
	}
}

// Ill-formed UTF-8 inside a string is replaced by the SSE reader, and the
// event then decodes: it is not a malformed event.
func TestInvalidUTF8InString(t *testing.T) {
	payloads := map[string]string{
		adapters.OpenAIResponses:    "{\"type\":\"response.output_text.delta\",\"item_id\":\"m\",\"output_index\":0,\"content_index\":0,\"delta\":\"a\xff\xfeb\",\"sequence_number\":0}",
		adapters.OpenAIChat:         "{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\xe4\xbdb\"}}]}",
		adapters.DeepSeekChat:       "{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\xe4\xbdb\"}}]}",
		adapters.AnthropicMessages:  "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\xffb\"}}",
		adapters.Gemini:             "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\xffb\"}]}}]}",
		adapters.GeminiInteractions: "{\"event_type\":\"step.delta\",\"index\":0,\"delta\":{\"type\":\"text\",\"text\":\"a\xffb\"}}",
	}
	for _, name := range Protocols {
		p, _ := Lookup(name)
		if diags := malformedDiags(t, p, payloads[name]); len(diags) != 0 {
			t.Errorf("%s: %v", name, diags)
		}
	}
}

// malformedDiags decodes a stream of one event carrying payload and
// returns the details of its malformed_event diagnostics.
func malformedDiags(t *testing.T, p adapters.Protocol, payload string) []string {
	t.Helper()
	var out []string
	st := adapters.NewStream(p)
	err := adapters.ReadStream(p, st, bytes.NewReader([]byte("data: "+payload+"\n\n")), func(s adapters.Step) error {
		for _, ev := range s.Events {
			if ev.Type == adapters.EvDiagnostic && ev.Kind == adapters.DiagMalformedEvent {
				out = append(out, ev.Detail)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
