package app

import (
	"encoding/json"
	"slices"

	"github.com/modelwire/modelwire/check"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/timeline"
)

// Checks reads back `modelwire check`'s matrix from the store: every
// session a check stored (a fork whose parameters carry check = {target,
// recording}), judged against its recording as check judged it
// (check.Compare). A recording checked against the same target more than
// once keeps its newest child. Cells come oldest recording first, in
// the order their children were made; the suite's probes (no recording)
// are left out.
func (l Library) Checks() ([]timeline.CheckCell, error) {
	list, err := l.DB.ListSessions(store.Filter{})
	if err != nil {
		return nil, err
	}
	slices.Reverse(list) // oldest first: the order check made them
	recs := map[string]*check.Profile{}
	at := map[[2]string]int{}
	var cells []timeline.CheckCell
	for _, info := range list {
		if info.ParentID == "" {
			continue
		}
		s, err := l.DB.GetSession(info.ID)
		if err != nil {
			return nil, err
		}
		var params struct {
			Check struct{ Target, Recording string }
		}
		if json.Unmarshal(s.Manifest.Parameters, &params) != nil || params.Check.Recording == "" || params.Check.Target == "" {
			continue
		}
		rec, ok := recs[params.Check.Recording]
		if !ok {
			if rec, err = check.Read(l.DB, params.Check.Recording); err != nil {
				continue // the recording was deleted: its children are no cells
			}
			recs[params.Check.Recording] = rec
		}
		got, err := check.Read(l.DB, info.ID)
		if err != nil {
			return nil, err
		}
		c := check.Compare(rec, got, params.Check.Target)
		cell := timeline.CheckCell{Recording: rec.ID, Child: c.Child, Target: c.Target,
			RecordingProtocol: rec.Protocol, RecordingVerdict: rec.Verdict, RecordingLayer: rec.FailedLayer,
			Status: c.Status, FailedLayer: c.FailedLayer, Protocol: c.Protocol, Provider: c.Provider, Model: c.Model,
			Regressions: c.Regressions, CreatedAt: info.CreatedAt}
		if cell.Status == "" {
			cell.Status = "error"
		}
		k := [2]string{cell.Recording, cell.Target}
		if i, ok := at[k]; ok {
			cells[i] = cell
			continue
		}
		at[k] = len(cells)
		cells = append(cells, cell)
	}
	return cells, nil
}
