package sim

import (
	"encoding/json"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
)

// regenerationTurn answers a regeneration: a request whose history holds
// every scripted model turn and whose last user message is a validation
// error (session.RegenerationLead). The script has no turn for it, so the
// final turn answers again — the same mistake, as a model that ignores the
// error would make it. ok is false for any other request past the script.
func regenerationTurn(sc *session.Scenario, turn int, protocol string, body []byte) (adapters.ModelTurn, bool) {
	if turn != len(sc.Script) || turn == 0 {
		return adapters.ModelTurn{}, false
	}
	if !strings.HasPrefix(lastUserText(protocol, body), session.RegenerationLead) {
		return adapters.ModelTurn{}, false
	}
	return sc.Script[turn-1], true
}

// lastUserText is the text of the request's last message when it is the
// user's: Responses input, Chat/DeepSeek and Anthropic messages, Gemini
// contents. The request was already checked, so shapes are trusted.
func lastUserText(protocol string, body []byte) string {
	var req struct {
		Input    json.RawMessage `json:"input"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if json.Unmarshal(body, &req) != nil {
		return ""
	}
	switch protocol {
	case adapters.OpenAIResponses:
		var items []struct {
			Type    string          `json:"type"`
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(req.Input, &items) != nil || len(items) == 0 {
			return ""
		}
		last := items[len(items)-1]
		if last.Role != "user" {
			return ""
		}
		return contentText(last.Content)
	case adapters.Gemini:
		if n := len(req.Contents); n > 0 && req.Contents[n-1].Role == "user" {
			var b strings.Builder
			for _, p := range req.Contents[n-1].Parts {
				b.WriteString(p.Text)
			}
			return b.String()
		}
		return ""
	}
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "user" {
		return contentText(req.Messages[n-1].Content)
	}
	return ""
}

// contentText joins the text of a content that is a string or a list of
// parts with text (input_text, text); other parts (tool results) add
// nothing.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}
