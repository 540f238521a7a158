package adapters

import (
	"encoding/json"

	"github.com/tidwall/gjson"
)

// HistoryItems are the conversation items a request carries — Chat and
// Anthropic messages, Responses input (a bare string is one user
// message), Gemini contents — each as Canonical JSON, so that a later
// request of the same conversation starts with the same texts however
// the client re-serialised them. The recording proxy and the HAR import
// both link requests into conversations with it.
func HistoryItems(protocol string, root gjson.Result) []string {
	var items []gjson.Result
	switch protocol {
	case OpenAIChat, DeepSeekChat, AnthropicMessages:
		items = root.Get("messages").Array()
	case OpenAIResponses:
		in := root.Get("input")
		if in.Type == gjson.String {
			// The next turn's SDK call sends it as a message.
			b, _ := json.Marshal(map[string]string{"role": "user", "content": in.String()})
			items = []gjson.Result{gjson.ParseBytes(b)}
		} else {
			items = in.Array()
		}
	case Gemini:
		items = root.Get("contents").Array()
	case GeminiInteractions:
		switch in := root.Get("input"); {
		case in.Type == gjson.String:
			// A bare string is one user_input step.
			b, _ := json.Marshal(map[string]any{"type": "user_input", "content": []map[string]string{{"type": "text", "text": in.String()}}})
			items = []gjson.Result{gjson.ParseBytes(b)}
		case in.IsObject():
			items = []gjson.Result{in}
		default:
			items = in.Array()
		}
	}
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = Canonical(it.Raw)
	}
	return out
}

// Canonical renders a JSON text with object keys sorted and null members
// dropped, so equal values compare equal as text whatever serialised
// them. Text that is not JSON is returned as it is.
func Canonical(raw string) string {
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return raw
	}
	b, _ := MarshalBody(dropNulls(v))
	return string(b)
}

func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
				continue
			}
			x[k] = dropNulls(e)
		}
	case []any:
		for i, e := range x {
			x[i] = dropNulls(e)
		}
	}
	return v
}
