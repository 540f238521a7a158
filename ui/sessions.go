package ui

import (
	"fmt"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/store"
)

// sessionsDialog browses stored sessions: filter, sort, delete (after a
// confirmation), export, and enter to replay one.
type sessionsDialog struct {
	c       *Common
	km      *KeyMap
	all     []store.SessionInfo
	err     error
	loading bool
	sel     int
	sortBy  int
	filter  *editor
	editing bool
}

var sortNames = []string{"newest", "oldest", "scenario", "status"}

func newSessionsDialog(c *Common, km *KeyMap) *sessionsDialog {
	d := &sessionsDialog{c: c, km: km, loading: true, filter: newEditor(true)}
	d.filter.prompt = "/"
	d.filter.holder = "filter: / then type (id, scenario, protocol, status)"
	return d
}

func (d *sessionsDialog) Kind() dialogKind { return dlgSessions }

func (d *sessionsDialog) setList(list []store.SessionInfo, err error) {
	d.all, d.err, d.loading = list, err, false
	d.sel = min(d.sel, max(0, len(d.visible())-1))
}

// visible is the filtered, sorted list.
func (d *sessionsDialog) visible() []store.SessionInfo {
	q := strings.ToLower(strings.TrimSpace(d.filter.Value()))
	var out []store.SessionInfo
	for _, s := range d.all {
		hay := strings.ToLower(strings.Join([]string{s.ID, s.ScenarioName(), s.Title, s.Protocol, s.Provider, s.Status, s.Source}, " "))
		if q == "" || strings.Contains(hay, q) {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch d.sortBy {
		case 1:
			return a.CreatedAt.Before(b.CreatedAt)
		case 2:
			return a.ScenarioName() < b.ScenarioName()
		case 3:
			return a.Status < b.Status
		}
		return a.CreatedAt.After(b.CreatedAt)
	})
	return out
}

func (d *sessionsDialog) selected() (store.SessionInfo, bool) {
	v := d.visible()
	if d.sel < 0 || d.sel >= len(v) {
		return store.SessionInfo{}, false
	}
	return v[d.sel], true
}

func (d *sessionsDialog) Bindings(km *KeyMap) []key.Binding {
	if d.editing {
		return []key.Binding{km.Dialog.Accept, km.Dialog.Close}
	}
	return []key.Binding{km.Nav.Up, km.Nav.Down, km.Nav.Select, km.Dialog.Filter, km.Dialog.Sort, km.Dialog.Delete, km.Dialog.Export, km.Dialog.Close}
}

func (d *sessionsDialog) HandleKey(msg tea.KeyMsg, km *KeyMap) (action, tea.Cmd) {
	if d.editing {
		switch {
		case key.Matches(msg, km.Dialog.Accept), key.Matches(msg, km.Dialog.Close):
			d.editing = false
			d.filter.Blur()
			return nil, nil
		}
		d.filter.Update(msg)
		d.sel = 0
		return nil, nil
	}
	n := len(d.visible())
	switch {
	case key.Matches(msg, km.Dialog.Close), key.Matches(msg, km.Global.Sessions):
		return actClose{}, nil
	case key.Matches(msg, km.Nav.Up):
		d.sel = max(0, d.sel-1)
	case key.Matches(msg, km.Nav.Down):
		d.sel = min(max(0, n-1), d.sel+1)
	case key.Matches(msg, km.Nav.Top):
		d.sel = 0
	case key.Matches(msg, km.Nav.Bottom):
		d.sel = max(0, n-1)
	case key.Matches(msg, km.Dialog.Filter):
		d.editing = true
		d.filter.Focus()
		return nil, nil
	case key.Matches(msg, km.Dialog.Sort):
		d.sortBy = (d.sortBy + 1) % len(sortNames)
	case key.Matches(msg, km.Nav.Select):
		if s, ok := d.selected(); ok {
			return actOpenReplay{id: s.ID}, nil
		}
	case key.Matches(msg, km.Dialog.Delete):
		if s, ok := d.selected(); ok {
			return actAskDelete{id: s.ID}, nil
		}
	case key.Matches(msg, km.Dialog.Export):
		if s, ok := d.selected(); ok {
			return actExport{id: s.ID}, nil
		}
	}
	return nil, nil
}

func (d *sessionsDialog) Update(tea.Msg) tea.Cmd { return nil }

func (d *sessionsDialog) View(w, h int) string {
	s := d.c.Styles
	bw := w
	inner := bw - s.Dialog.GetHorizontalFrameSize()
	var lines []string
	switch {
	case d.loading:
		lines = append(lines, s.Muted.Render("loading…"))
	case d.err != nil:
		lines = append(lines, s.Bad.Render(d.err.Error()))
	}
	lines = append(lines, cut(d.filter.View(inner-20, 1, d.c)+s.Muted.Render("   sort: "+sortNames[d.sortBy]), inner))
	v := d.visible()
	head := fmt.Sprintf("%-13s %-16s %-22s %-18s %-11s %5s %6s", "ID", "CREATED", "SCENARIO", "PROTOCOL", "STATUS", "TURNS", "EVENTS")
	lines = append(lines, s.Muted.Render(cut(head, inner)))
	room := max(1, h-8)
	first := max(0, min(d.sel-room/2, len(v)-room))
	for i := first; i < min(len(v), first+room); i++ {
		x := v[i]
		status := s.State(map[string]string{"done": "pass", "failed": "fail"}[x.Status]).Render(fit(x.Status, 11))
		line := fmt.Sprintf("%-13s %-16s ", x.ID, x.CreatedAt.Format("2006-01-02 15:04")) + fit(x.ScenarioName(), 22) + " " +
			fit(x.Protocol, 18) + " " + status + fmt.Sprintf(" %5d %6d", x.Turns, x.Events)
		if i == d.sel {
			line = s.Selected.Render(fit(ansiStrip(line), inner))
		}
		lines = append(lines, cut(line, inner))
	}
	if !d.loading && len(v) == 0 {
		lines = append(lines, s.Muted.Render("no stored sessions"))
	}
	hint := hintOf(d.Bindings(d.km)...)
	return d.c.box(fmt.Sprintf("Sessions (%d)", len(v)), lines, hint, bw, h)
}
