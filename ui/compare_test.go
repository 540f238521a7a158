package ui

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/modelwire/modelwire/samples"
)

// at resolves a compare cell ("messages[2].content[0]") in a JSON body.
func at(t *testing.T, body []byte, path string) any {
	t.Helper()
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	for _, seg := range regexp.MustCompile(`[^.\[\]]+|\[\d+\]`).FindAllString(path, -1) {
		if strings.HasPrefix(seg, "[") {
			i, _ := strconv.Atoi(strings.Trim(seg, "[]"))
			a, ok := doc.([]any)
			if !ok || i >= len(a) {
				return nil
			}
			doc = a[i]
			continue
		}
		m, ok := doc.(map[string]any)
		if !ok {
			return nil
		}
		doc = m[seg]
	}
	return doc
}

// holds reports whether the place v is one source's own: its text, or a
// block or part whose text it is — not a whole message or list of blocks
// that holds other sources too.
func holds(v any, text string) bool {
	switch x := v.(type) {
	case string:
		return strings.Contains(x, text)
	case map[string]any:
		s, ok := x["text"].(string)
		return ok && strings.Contains(s, text)
	}
	return false
}

// Each row of the compare table names, for every protocol, the place in
// that protocol's request where the part went: a source's own text, the
// first tool's declaration, the output schema. No cell is "—" and none
// names a whole message that holds other parts too.
func TestCompareRowsNameWhereEachPartWent(t *testing.T) {
	m := newLive(t, 200, 60)
	press(m, "c")
	d, ok := m.top().(*compareDialog)
	if !ok {
		t.Fatal("c should open compare")
	}
	sc := m.d.scenario
	rows := map[string]compareRow{}
	for _, r := range d.rows {
		rows[r.what] = r
	}
	for i, col := range d.cols {
		if col.err != nil {
			t.Fatalf("%s: %v", col.protocol, col.err)
		}
		for _, src := range sc.Sources {
			cell := rows[src.ID].cells[i]
			if v := at(t, col.req.Body, cell); !holds(v, src.Text) {
				t.Errorf("%s: %s is at %s, which holds %.80v", col.protocol, src.ID, cell, v)
			}
		}
		tool := sc.Tools[0].Name
		cell := rows["tool "+tool].cells[i]
		if v, _ := at(t, col.req.Body, cell).(map[string]any); v == nil || !strings.Contains(mustJSON(v), `"`+tool+`"`) {
			t.Errorf("%s: tool %s is at %s, which is %.80v", col.protocol, tool, cell, v)
		}
		cell = rows["output schema"].cells[i]
		if v := at(t, col.req.Body, cell); v == nil || !strings.Contains(mustJSON(v), "reply_draft") {
			t.Errorf("%s: the output schema is at %s, which holds %.80v", col.protocol, cell, v)
		}
		if c := rows["tool result"].cells[i]; c == "—" || c == "" {
			t.Errorf("%s: no place for the tool result", col.protocol)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// At 200 columns the table shows all six protocols with whole paths; at
// 80 it shows two whole, and → moves the table along to the selected one.
func TestCompareTableFitsWholePaths(t *testing.T) {
	m := newLive(t, 200, 60)
	press(m, "c")
	v := screenText(m.View())
	contains(t, v, "openai-responses", "deepseek-chat", "response_format.json_schema.schema", "generationConfig.responseJsonSchema",
		"contents[0].parts[1]", "messages[2].content[0]")
	if strings.Contains(v, "protocols 1–") {
		t.Errorf("200 columns should show every protocol:\n%s", v)
	}

	m = newLive(t, 80, 24)
	press(m, "c")
	v = screenText(m.View())
	contains(t, v, "input[3].content[0]", "protocols 1–2 of 6")
	for _, l := range strings.Split(v, "\n") {
		if w := ansi.StringWidth(l); w > 80 {
			t.Errorf("a line of %d cells at 80: %q", w, l)
		}
	}
	press(m, "right", "right", "right")
	contains(t, m.View(), "systemInstruction.parts[1]", "protocols 3–4 of 6")
	// The body has no room under the table at 24 rows: ↓ scrolls the
	// whole dialog down to it.
	post := "POST /v1beta/models/refund-model:streamGenerateContent"
	for i := 0; i < 30 && !strings.Contains(screenText(m.View()), post); i++ {
		press(m, "down")
	}
	contains(t, m.View(), post)
	for range 30 {
		press(m, "up")
	}
	// The selected protocol is marked by a glyph, not only by colour.
	contains(t, m.View(), focusMark+"gemini ", "  anthropic-messages")
	if strings.Contains(screenText(m.View()), focusMark+"anthropic-messages") {
		t.Error("a protocol that is not selected is marked")
	}
}

// A variant's compare view names the words it changed in the passing
// case's prompt, whole.
func TestCompareShowsTheVariantsEdits(t *testing.T) {
	sc, err := samples.Lookup("refund/claims-refunded")
	if err != nil {
		t.Fatal(err)
	}
	m := newLive(t, 120, 60)
	view := newCompareDialog(m.c, sc, RunConfig{Stream: true}).View(120, 60)
	for _, want := range []string{"refund/claims-refunded edits the passing case's prompt:", "system-rules:", "不把生成回复等同于执行退款。"} {
		if !strings.Contains(view, want) {
			t.Errorf("compare view lacks %q:\n%s", want, view)
		}
	}
}
