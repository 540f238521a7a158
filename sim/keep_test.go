package sim

import (
	"fmt"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
)

// TestKeepBytes: the kept responses stay within KeepBytes, the oldest
// giving way, and one larger than the whole bound is not kept.
func TestKeepBytes(t *testing.T) {
	s := New(Options{KeepBytes: 10 << 10})
	big := storedResponse{prompt: []adapters.PromptPart{{Text: strings.Repeat("x", 3<<10)}}}
	big.size = sizeOf(big)
	for i := range 10 {
		s.keep(fmt.Sprint("r", i), big)
	}
	if s.keptBytes > 10<<10 || len(s.responses) != 3 {
		t.Fatalf("kept %d responses, %d bytes; want 3 within %d", len(s.responses), s.keptBytes, 10<<10)
	}
	if _, ok := s.responses["r9"]; !ok {
		t.Fatal("the newest response was not kept")
	}
	huge := storedResponse{prompt: []adapters.PromptPart{{Text: strings.Repeat("x", 20<<10)}}}
	huge.size = sizeOf(huge)
	s.keep("huge", huge)
	if _, ok := s.responses["huge"]; ok {
		t.Fatal("a response larger than the bound was kept")
	}
}
