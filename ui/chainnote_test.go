package ui

import "testing"

// TestChainNote: the history option's note names the protocols whose
// descriptors have a ChainField, as it always read.
func TestChainNote(t *testing.T) {
	if got := chainNote(); got != "Responses and Interactions" {
		t.Errorf("chainNote() = %q", got)
	}
}
