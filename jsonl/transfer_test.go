package jsonl

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/store"
)

func TestJSONLRoundTrip(t *testing.T) {
	a, _ := openTemp(t)
	id := fullSession(t, a)
	first := exportJSONL(t, a, id)

	b, bpath := openTemp(t)
	res, err := Import(b, bytes.NewReader(first), "export.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Sessions, []string{id}) {
		t.Fatalf("imported %+v", res)
	}
	second := exportJSONL(t, b, id)
	if !bytes.Equal(first, second) {
		t.Fatalf("export → import → export differs:\n%s\n----\n%s", first, second)
	}
	// Same timeline, same session, same state.
	ea, _ := a.Events(id, 1, 0)
	eb, _ := b.Events(id, 1, 0)
	if !reflect.DeepEqual(ea, eb) {
		t.Errorf("timelines differ")
	}
	sa, _ := a.GetSession(id)
	sb, _ := b.GetSession(id)
	if !reflect.DeepEqual(sa, sb) {
		t.Errorf("sessions differ:\n%+v\n%+v", sa, sb)
	}
	for _, n := range []int{5, 20, len(ea)} {
		xa, _ := a.StateAt(id, n)
		xb, _ := b.StateAt(id, n)
		if !reflect.DeepEqual(xa, xb) {
			t.Errorf("state at %d differs", n)
		}
	}
	// Importing again skips it.
	res, err = Import(b, bytes.NewReader(first), "export.jsonl")
	if err != nil || len(res.Sessions) != 0 || !reflect.DeepEqual(res.Present, []string{id}) {
		t.Errorf("second import: %+v, %v", res, err)
	}
	b.Close()
	if raw, _ := os.ReadFile(bpath); len(raw) == 0 {
		t.Fatal("empty database")
	}
}

func TestJSONLImportRejectsMalformed(t *testing.T) {
	a, _ := openTemp(t)
	id := fullSession(t, a)
	good := strings.Split(strings.TrimSpace(string(exportJSONL(t, a, id))), "\n")
	with := func(i int, line string) string {
		lines := append([]string{}, good...)
		lines[i] = line
		return strings.Join(lines, "\n") + "\n"
	}
	drop := func(i int) string {
		lines := append(append([]string{}, good[:i]...), good[i+1:]...)
		return strings.Join(lines, "\n") + "\n"
	}
	firstStep, decision := 0, 0
	for i, l := range good {
		if strings.HasPrefix(l, `{"type":"step"`) && firstStep == 0 {
			firstStep = i
		}
		if strings.Contains(l, `"type":"tool.decision"`) {
			decision = i
		}
	}
	cases := []struct {
		name, body string
		line       int
		msg        string
	}{
		{"empty", "", 1, "empty"},
		{"not ours", `{"log":{}}` + "\n", 1, "not a modelwire JSONL export"},
		{"not JSON", with(3, `{"type":"attempt",`), 4, "not a JSON object"},
		{"unknown field", with(1, strings.Replace(good[1], `"title"`, `"titel"`, 1)), 2, "unknown field"},
		{"missing step", drop(firstStep + 2), firstStep + 3, "expected"},
		{"bad decision", with(decision, strings.Replace(good[decision], `"edited"`, `"maybe"`, 1)), decision + 1, "decision"},
		{"unknown type", with(2, `{"type":"mystery"}`), 3, "unknown line type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, _ := openTemp(t)
			_, err := Import(b, strings.NewReader(c.body), "in.jsonl")
			var ie *store.InputError
			if !errors.As(err, &ie) || ie.Line != c.line || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("got %v, want line %d saying %q", err, c.line, c.msg)
			}
			if !strings.HasPrefix(err.Error(), fmt.Sprintf("in.jsonl:%d: ", c.line)) {
				t.Errorf("error %q does not start with the file and line", err)
			}
			if list, _ := b.ListSessions(store.Filter{}); len(list) != 0 {
				t.Errorf("a malformed file imported %d sessions", len(list))
			}
		})
	}
}

func TestJSONLImportRedacts(t *testing.T) {
	a, _ := openTemp(t)
	id := fullSession(t, a)
	exp := string(exportJSONL(t, a, id))
	exp = strings.Replace(exp, `"request_headers":{}`, `"request_headers":{"Authorization":["Bearer `+planted+`"],"X-Goog-Api-Key":["`+planted+`"]}`, 1)
	exp = strings.Replace(exp, `"url":"https://api.openai.com/v1/responses"`, `"url":"https://api.openai.com/v1/responses?key=`+planted+`"`, 1)
	if strings.Count(exp, planted) != 3 {
		t.Fatalf("the key was not planted: %d", strings.Count(exp, planted))
	}
	b, path := openTemp(t)
	if _, err := Import(b, strings.NewReader(exp), "x.jsonl"); err != nil {
		t.Fatal(err)
	}
	b.Close()
	for _, p := range []string{path, path + "-wal"} {
		raw, _ := os.ReadFile(p)
		if bytes.Contains(raw, []byte(planted)) {
			t.Errorf("the planted key is in %s", filepath.Base(p))
		}
	}
}
