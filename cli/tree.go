package cli

import (
	"strings"

	"github.com/modelwire/modelwire/store"
)

// sessionTree orders sessions so that each fork (or edit-and-resend)
// follows the session it was made from, and says how deep each one sits.
// Sessions whose parent is not in the list are roots; roots and the
// children of one parent keep the list's order.
func sessionTree(list []store.SessionInfo) ([]store.SessionInfo, []int) {
	in := make(map[string]bool, len(list))
	for _, s := range list {
		in[s.ID] = true
	}
	children := map[string][]store.SessionInfo{}
	var roots []store.SessionInfo
	for _, s := range list {
		if s.ParentID != "" && in[s.ParentID] && s.ParentID != s.ID {
			children[s.ParentID] = append(children[s.ParentID], s)
		} else {
			roots = append(roots, s)
		}
	}
	out := make([]store.SessionInfo, 0, len(list))
	depth := make([]int, 0, len(list))
	seen := map[string]bool{}
	var walk func(s store.SessionInfo, d int)
	walk = func(s store.SessionInfo, d int) {
		if seen[s.ID] {
			return // a cycle cannot be made, but a list must not loop on one
		}
		seen[s.ID] = true
		out, depth = append(out, s), append(depth, d)
		for _, c := range children[s.ID] {
			walk(c, d+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	return out, depth
}

// treeID is a session's id indented under its parent.
func treeID(id string, depth int) string {
	if depth == 0 {
		return id
	}
	return strings.Repeat("  ", depth-1) + "└ " + id
}
