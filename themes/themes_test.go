package themes

import (
	"testing"

	"github.com/alecthomas/chroma/v2"
	chromastyles "github.com/alecthomas/chroma/v2/styles"
)

func TestEveryThemeBuildsWithItsChromaStyle(t *testing.T) {
	for _, name := range Names {
		p, err := ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		if p.Name != name {
			t.Fatalf("ByName(%q) gave %q", name, p.Name)
		}
		if chromastyles.Get(p.Chroma) == chromastyles.Fallback && p.Chroma != "swapoff" {
			t.Errorf("%s: chroma style %q is not registered", name, p.Chroma)
		}
		s := Build(p)
		if s.ChromaName() != p.Chroma {
			t.Errorf("%s: chroma %s", name, s.ChromaName())
		}
		_ = s.Token(chroma.LiteralString).Render("x")
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
