package themes

import (
	"testing"
)

func TestEveryThemeBuilds(t *testing.T) {
	for _, name := range Names {
		p, err := ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		if p.Name != name {
			t.Fatalf("ByName(%q) gave %q", name, p.Name)
		}
		s := Build(p)
		// JSON reads by its tokens: a key, a string and a literal each
		// have a colour of their own, distinct from the punctuation.
		for _, tk := range []Token{TokenKey, TokenString, TokenLiteral} {
			if s.Token(tk).GetForeground() == s.Token(TokenPunct).GetForeground() {
				t.Errorf("%s: token %d has the punctuation's colour", name, tk)
			}
		}
		if s.Token(TokenString).GetForeground() == s.Token(TokenKey).GetForeground() {
			t.Errorf("%s: keys and strings share a colour", name)
		}
		if s.Token(Token(99)).GetForeground() != s.Token(TokenText).GetForeground() {
			t.Errorf("%s: an unknown token is not styled as text", name)
		}
		for _, k := range []string{"message", "reasoning", "tool_call", "refusal"} {
			if s.Kind(k).GetForeground() == s.Text.GetForeground() {
				t.Errorf("%s: kind %s has no colour of its own", name, k)
			}
		}
	}
}

func TestNextCycles(t *testing.T) {
	n := "dark"
	seen := map[string]bool{}
	for range Names {
		n = Next(n)
		seen[n] = true
	}
	if len(seen) != len(Names) || Next("nonsense") != "dark" {
		t.Fatalf("cycle %v", seen)
	}
	if _, err := ByName("neon"); err == nil {
		t.Fatal("an unknown theme should be an error")
	}
}
