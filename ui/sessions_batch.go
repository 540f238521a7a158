package ui

import (
	"fmt"

	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/validate"
)

// A batch's requests are imported as one session each (modelwire import of
// a Batch API's files), titled with the batch's id and status. The list
// shows them as a group: a header row with the batch's own status and
// counts, its requests beneath, each with its own status. A request that
// failed does not make the batch failed: the two statuses stand apart.

// batchRow is a group header's row in the list: not a session, so its ID
// is empty and nothing (replay, delete, export, mark) acts on it.
func batchRow(group, status string, members []session.SessionInfo) session.SessionInfo {
	failed := 0
	for _, m := range members {
		if m.Status == session.StatusFailed {
			failed++
		}
	}
	shown := status
	if shown == "" {
		shown = "status not given"
	}
	// The row's status is the batch's own (completed, failed…), not a
	// session's.
	return session.SessionInfo{Title: fmt.Sprintf("batch %s · %s · %d requests, %d failed", group, shown, len(members), failed),
		Status: session.Status(status)}
}

// batchRows counts the batch headers among rows.
func batchRows(rows []session.SessionInfo) int {
	n := 0
	for _, r := range rows {
		if isBatchRow(r) {
			n++
		}
	}
	return n
}

// isBatchRow says whether a row is a batch's header.
func isBatchRow(s session.SessionInfo) bool { return s.ID == "" }

// groupBatches gathers the batches' requests under a header each, placed
// where the batch's first request sits in the list; each request keeps
// the rows beneath it (its forks), one level deeper. Other rows stay.
func groupBatches(list []session.SessionInfo, depth []int) ([]session.SessionInfo, []int) {
	type block struct {
		rows  []session.SessionInfo
		depth []int
	}
	var blocks []block
	for i, s := range list {
		if depth[i] == 0 || len(blocks) == 0 {
			blocks = append(blocks, block{})
		}
		b := &blocks[len(blocks)-1]
		b.rows, b.depth = append(b.rows, s), append(b.depth, depth[i])
	}
	groups := map[string][]int{} // batch id → its blocks, in order
	for i, b := range blocks {
		if g, _, _, ok := b.rows[0].Batch(); ok {
			groups[g] = append(groups[g], i)
		}
	}
	if len(groups) == 0 {
		return list, depth
	}
	out := make([]session.SessionInfo, 0, len(list)+len(groups))
	outDepth := make([]int, 0, len(list)+len(groups))
	done := map[string]bool{}
	for _, b := range blocks {
		g, status, _, ok := b.rows[0].Batch()
		if !ok {
			out, outDepth = append(out, b.rows...), append(outDepth, b.depth...)
			continue
		}
		if done[g] {
			continue
		}
		done[g] = true
		var members []session.SessionInfo
		for _, i := range groups[g] {
			members = append(members, blocks[i].rows[0])
		}
		out, outDepth = append(out, batchRow(g, status, members)), append(outDepth, 0)
		for _, i := range groups[g] {
			for j, r := range blocks[i].rows {
				out, outDepth = append(out, r), append(outDepth, blocks[i].depth[j]+1)
			}
		}
	}
	return out, outDepth
}

// originOf is what the SCENARIO/APP column shows: a batch request's
// custom_id, else what ran (Origin).
func originOf(s session.SessionInfo) string {
	if _, _, id, ok := s.Batch(); ok {
		return id
	}
	return s.Origin()
}

// batchHeader renders a batch's header row: the batch's status coloured
// as a verdict (completed passes; failed, expired, cancelled fail).
func (d *sessionsDialog) batchHeader(x session.SessionInfo, selected bool, inner int) string {
	s := d.c.Styles
	if selected {
		return s.Selected.Render(fit(d.gutter("", true)+"▾ "+x.Title, inner))
	}
	v := validate.Verdict("")
	switch string(x.Status) { // the batch's status (batchRow)
	case "completed":
		v = validate.Pass
	case "failed", "expired", "cancelled":
		v = validate.Fail
	}
	return cut("  "+s.State(string(v)).Render("▾ "+x.Title), inner)
}
