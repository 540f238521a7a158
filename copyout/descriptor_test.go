package copyout

import (
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
)

// TestKeysAndSDKsFromTheDescriptors: the key variable, the key header and
// the SDK snippet of every protocol are its descriptor's, as they were.
func TestKeysAndSDKsFromTheDescriptors(t *testing.T) {
	for _, c := range []struct{ protocol, env, header, call string }{
		{adapters.OpenAIResponses, "OPENAI_API_KEY", "authorization", "client.responses.create"},
		{adapters.OpenAIChat, "OPENAI_API_KEY", "authorization", "client.chat.completions.create"},
		{adapters.DeepSeekChat, "DEEPSEEK_API_KEY", "authorization", "client.chat.completions.create"},
		{adapters.AnthropicMessages, "ANTHROPIC_API_KEY", "x-api-key", "client.messages.create"},
		{adapters.Gemini, "GEMINI_API_KEY", "x-goog-api-key", ""},
		{adapters.GeminiInteractions, "GEMINI_API_KEY", "x-goog-api-key", ""},
		{"unknown", "OPENAI_API_KEY", "authorization", ""},
	} {
		sdk, _ := sdkOf(c.protocol)
		if got := KeyEnv(c.protocol, adapters.ProviderSim); got != c.env || keyHeader(c.protocol) != c.header || sdk.Call != c.call {
			t.Errorf("%s: %s %s %q", c.protocol, got, keyHeader(c.protocol), sdk.Call)
		}
	}
	if got := KeyEnv(adapters.OpenAIChat, adapters.ProviderDeepSeek); got != "DEEPSEEK_API_KEY" {
		t.Errorf("a named provider's key: %s", got)
	}
	for _, d := range registry.All() {
		r := Request{URL: d.Endpoint.BaseURL + "/x", Body: []byte(`{"model":"m","stream":true,"extra_thing":1}`), Protocol: d.Name}
		py, ts := Python(r), TypeScript(r)
		if d.SDK.Client == "" {
			if !strings.Contains(py, "httpx") || !strings.Contains(ts, "fetch(") {
				t.Errorf("%s: no SDK, the REST call:\n%s\n%s", d.Name, py, ts)
			}
			continue
		}
		if !strings.Contains(py, d.SDK.Call+"(**body, extra_body=extra)") || !strings.Contains(ts, d.SDK.Call+"(body)") ||
			!strings.Contains(py, "os.environ[\""+d.Auth.Env+"\"]") {
			t.Errorf("%s: the SDK's call:\n%s\n%s", d.Name, py, ts)
		}
	}
}
