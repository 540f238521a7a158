package ui

import "github.com/modelwire/modelwire/session"

// SessionTree orders sessions so that each fork (or edit-and-resend)
// follows the session it was made from, and says how deep each one sits.
// Sessions whose parent is not in the list are roots; roots and the
// children of one parent keep the list's order. The sessions list and
// `modelwire sessions` both nest with it.
func SessionTree(list []session.SessionInfo) ([]session.SessionInfo, []int) {
	in := make(map[string]bool, len(list))
	for _, s := range list {
		in[s.ID] = true
	}
	children := map[string][]session.SessionInfo{}
	var roots []session.SessionInfo
	for _, s := range list {
		if s.ParentID != "" && in[s.ParentID] && s.ParentID != s.ID {
			children[s.ParentID] = append(children[s.ParentID], s)
		} else {
			roots = append(roots, s)
		}
	}
	out := make([]session.SessionInfo, 0, len(list))
	depth := make([]int, 0, len(list))
	seen := map[string]bool{}
	var walk func(s session.SessionInfo, d int)
	walk = func(s session.SessionInfo, d int) {
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
