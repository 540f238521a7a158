package proxy

import (
	"context"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// TestProxyManifest: a proxied session's manifest names the client (the
// SDK's User-Agent), hashes the request's instructions as its prompt
// template and each tool it offers by name, and records the model the
// provider reported.
func TestProxyManifest(t *testing.T) {
	rc := refund(t)
	r := newRig(t, "", Options{})
	c := openai.NewClient(option.WithBaseURL(r.url+"/v1/"), option.WithAPIKey(sdkKey), option.WithMaxRetries(0))
	params := openai.ChatCompletionNewParams{Model: "refund-model",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(rc.system), openai.UserMessage(rc.task)}}
	for _, tl := range rc.sc.Tools {
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(sharedFunction(t, tl.Name, tl.Description, tl.Parameters)))
	}
	if _, err := c.Chat.Completions.New(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	sessions := r.stop()
	if len(sessions) != 1 {
		t.Fatalf("%d sessions", len(sessions))
	}
	m := sessions[0].Manifest
	if !strings.HasPrefix(m.Client, "OpenAI/Go") || m.Hashes["prompt"] == "" || m.Model != "refund-model" || m.ModelReported == "" || m.AdapterVersion == "" {
		t.Errorf("manifest %+v", m)
	}
	for _, tl := range rc.sc.Tools {
		if m.ToolHashes[tl.Name] == "" {
			t.Errorf("no hash for tool %s: %v", tl.Name, m.ToolHashes)
		}
	}
}
