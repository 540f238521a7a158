package session_test

import (
	"strings"
	"testing"

	"github.com/modelwire/modelwire/session"
)

// noteCase is a scenario with notes for a step, a turn and a variant.
const noteCase = `{"name":"n","title":"t","sources":[{"id":"task","role":"user","trust":"verified","text":"check"}],"script":[{"stop":"final","items":[{"kind":"message","text":"x"}]}],
 "variants":{"slow":{"description":"d"}},
 "notes":{"results":"any turn","results@1":"turn one","slow/results@2":"slow two","slow/results":"slow any","validated":"end"}}`

// TestNoteMostSpecificWins: a note for the variant's turn beats the
// variant's, which beats the turn's, which beats the step's; a file with
// step keys only reads as before.
func TestNoteMostSpecificWins(t *testing.T) {
	base, err := session.ParseScenario("n.json", []byte(noteCase), "")
	if err != nil {
		t.Fatal(err)
	}
	slow, err := session.ParseScenario("n.json", []byte(noteCase), "slow")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sc   *session.Scenario
		step string
		turn int
		want string
	}{
		{base, "results", 1, "turn one"}, {base, "results", 2, "any turn"}, {base, "results", 0, "any turn"},
		{base, "validated", 3, "end"}, {base, "final", 1, ""},
		{slow, "results", 2, "slow two"}, {slow, "results", 1, "slow any"}, {slow, "validated", 0, "end"},
	} {
		if got := c.sc.Note(c.step, c.turn); got != c.want {
			t.Errorf("variant %q, %s@%d: %q, want %q", c.sc.Variant, c.step, c.turn, got, c.want)
		}
	}
}

// TestNoteKeysAreChecked: a note for no step, a variant the file lacks or
// a malformed key is refused, with the key in the pointer.
func TestNoteKeysAreChecked(t *testing.T) {
	for key, want := range map[string]string{
		"result@1":     "/notes",
		"results@0":    "/notes",
		"fast/results": `variant "fast"`,
		"results@1@2":  "/notes",
	} {
		doc := strings.Replace(noteCase, `"validated":"end"`, `"`+key+`":"x"`, 1)
		_, err := session.ParseScenario("n.json", []byte(doc), "")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("note %q: %v, want an error with %q", key, err, want)
		}
	}
}
