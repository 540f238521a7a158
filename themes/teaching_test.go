package themes

import (
	"encoding/json"
	"testing"
)

// Every entry of the data file has two non-empty lines, and lookups strip
// indices and fall back to the longest known prefix.
func TestTeachingTexts(t *testing.T) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(teachingJSON, &raw); err != nil {
		t.Fatal(err)
	}
	for k, v := range raw {
		if k == "_comment" {
			continue
		}
		var lines []string
		if err := json.Unmarshal(v, &lines); err != nil || len(lines) != 2 || lines[0] == "" || lines[1] == "" {
			t.Errorf("%s: want two lines, got %s", k, v)
		}
	}
	for key, want := range map[string]string{
		"input[1].content[3].text":    "input.content.text",
		"messages[2].content[0].text": "messages.content",
		"tools[0]":                    "tools",
		"text.format.name":            "text.format",
		"domain":                      "domain",
	} {
		what, _, ok := Explain(key)
		if w, _, _ := Explain(want); !ok || what != w {
			t.Errorf("Explain(%q) = %q, want the text of %q", key, what, want)
		}
	}
	if _, _, ok := Explain("no.such.field"); ok {
		t.Error("an unknown field was explained")
	}
}
