package cli

import "strings"

// treeID is a session's id indented under its parent (ui.SessionTree
// orders the list and gives the depth).
func treeID(id string, depth int) string {
	if depth == 0 {
		return id
	}
	return strings.Repeat("  ", depth-1) + "└ " + id
}
