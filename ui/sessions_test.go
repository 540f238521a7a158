package ui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/modelwire/modelwire/app"
	"github.com/modelwire/modelwire/store"
)

func listFixture() []store.SessionInfo {
	t0 := time.Date(2026, 6, 1, 10, 0, 0, 0, time.Local)
	return []store.SessionInfo{
		{ID: "1aaaaaaaaaaa", CreatedAt: t0, FinishedAt: t0.Add(1500 * time.Millisecond), Status: "done", Scenario: "refund",
			Protocol: "openai-responses", Provider: "sim", Model: "refund-model", Turns: 3, InputTokens: 900, OutputTokens: 120},
		{ID: "1bbbbbbbbbbb", CreatedAt: t0.Add(time.Hour), FinishedAt: t0.Add(time.Hour + 4*time.Second), Status: "failed",
			Scenario: "refund", Variant: "wrong-cap", Protocol: "anthropic-messages", Provider: "sim", Model: "refund-model",
			Faults: []string{"rate-limit"}, FailedLayer: "domain", Turns: 3, InputTokens: 1000, OutputTokens: 200},
		{ID: "1ccccccccccc", CreatedAt: t0.Add(2 * time.Hour), Status: "running", Source: "proxy", Protocol: "openai-chat",
			Provider: "openai", Model: "gpt-4o", ModelReported: "gpt-4o-2024-08-06", BaseURL: "https://api.openai.com/v1",
			Title: "POST api.openai.com/v1/chat/completions · 退款", Turns: 1},
	}
}

func sessionsView(t *testing.T, w int) (*sessionsDialog, func() string) {
	t.Helper()
	km := DefaultKeyMap()
	d := newSessionsDialog(newCommon("dark", true, false, nil), &km)
	d.setList(listFixture(), nil)
	return d, func() string { return d.View(w, 30) }
}

// The list shows the fault, the first failing layer, tokens and duration;
// a proxy session its upstream host and the model the provider reported.
func TestSessionsListColumns(t *testing.T) {
	_, view := sessionsView(t, 200)
	// Cost at the price table's teaching price for refund-model: 1 USD a
	// million input tokens, 4 output: 900 in + 120 out = 0.00138.
	contains(t, view(), "FAULT", "FAILED", "TOKENS", "COST", "$0.00138", "$0.00180", "TIME", "rate-limit", "domain", "1200", "4s",
		"refund/wrong-cap", "proxy → api.openai.com", "gpt-4o-2024-08-06", "▸ 1ccccccccccc")
	// 80 columns: the columns that matter most still fit, none is cut.
	_, narrow := sessionsView(t, 80)
	s := narrow()
	contains(t, s, "ID", "STATUS", "SCENARIO/APP", "FAILED", "domain")
	for _, line := range strings.Split(s, "\n") {
		if w := ansi.StringWidth(line); w > 80 {
			t.Errorf("line of %d cells at 80: %q", w, line)
		}
	}
}

// S sorts by the next column, R reverses; the header marks the column.
func TestSessionsListSorts(t *testing.T) {
	d, view := sessionsView(t, 200)
	ids := func() string {
		var out []string
		for _, s := range d.visible() {
			out = append(out, s.ID[:2])
		}
		return strings.Join(out, " ")
	}
	if got := ids(); got != "1c 1b 1a" {
		t.Fatalf("default order %s, want newest first", got)
	}
	km := DefaultKeyMap()
	for d.sortBy != 10 { // TOKENS
		d.HandleKey(key1("S"), &km)
	}
	if got := ids(); got != "1c 1a 1b" {
		t.Errorf("by tokens %s", got)
	}
	d.HandleKey(key1("R"), &km)
	if got := ids(); got != "1b 1a 1c" {
		t.Errorf("by tokens reversed %s", got)
	}
	contains(t, view(), "sort: TOKENS ↓", "TOKENS↓")
	// Every column sorts: S moves on to the cost (the unpriced session,
	// with no tokens, first), then round to the creation time again.
	d.HandleKey(key1("S"), &km)
	if got := ids(); got != "1c 1a 1b" || sessionColumns[d.sortBy].name != "COST" {
		t.Errorf("by %s: %s", sessionColumns[d.sortBy].name, got)
	}
	contains(t, view(), "sort: COST ↑", "COST↑")
	seen := map[string]bool{}
	for range sessionColumns {
		d.HandleKey(key1("S"), &km)
		seen[sessionColumns[d.sortBy].name] = true
	}
	if len(seen) != len(sessionColumns) {
		t.Errorf("S reached %d of %d columns", len(seen), len(sessionColumns))
	}
}

// / searches fuzzily over titles, models, scenarios and layers; a search
// that matches nothing says so (not "no stored sessions").
func TestSessionsListFuzzySearch(t *testing.T) {
	d, view := sessionsView(t, 200)
	km := DefaultKeyMap()
	search := func(q string) []string {
		d.HandleKey(key1("/"), &km)
		for d.filter.Value() != "" {
			d.HandleKey(key1("backspace"), &km)
		}
		for _, r := range q {
			d.HandleKey(key1(string(r)), &km)
		}
		d.HandleKey(key1("enter"), &km)
		var out []string
		for _, s := range d.visible() {
			out = append(out, s.ID[:2])
		}
		return out
	}
	for q, want := range map[string]string{"anthdom": "1b", "gpt4o0806": "1c", "退款": "1c", "wrongcap": "1b", "refund": "1b 1a"} {
		if got := strings.Join(search(q), " "); got != want {
			t.Errorf("search %q found %q, want %q", q, got, want)
		}
	}
	search("zzz")
	s := view()
	contains(t, s, `no session matches "zzz" (of 3 stored)`)
	if strings.Contains(s, "no stored sessions") {
		t.Error("an empty search result says there are no sessions")
	}
}

// A query of three characters or more also finds sessions by what was
// exchanged: a tool result edited to paid_cents 20000 finds that session
// only, through the real store, searched in a command once typing pauses
// (one scan for the whole query, not one per key).
func TestSessionsSearchContent(t *testing.T) {
	db, parent, ups, sc := recordFixture(t)
	edited := recordEditedOrder(t, db, sc, ups, "")
	lib := app.Library{DB: db}
	list, err := lib.List()
	if err != nil {
		t.Fatal(err)
	}
	km := DefaultKeyMap()
	d := newSessionsDialog(newCommon("dark", true, false, nil), &km)
	var scans []string
	d.search = func(q string) ([]string, error) {
		scans = append(scans, q)
		return lib.Search(q)
	}
	d.setList(list, nil)
	found := func(q string) []string {
		t.Helper()
		d.HandleKey(key1("/"), &km)
		for d.filter.Value() != "" {
			d.HandleKey(key1("backspace"), &km)
		}
		// Every key's scheduled search comes due after the last key, as
		// when typing is faster than the delay.
		var due []tea.Cmd
		for _, r := range q {
			if _, cmd := d.HandleKey(key1(string(r)), &km); cmd != nil {
				due = append(due, cmd)
			}
		}
		d.HandleKey(key1("enter"), &km)
		scans = nil
		for _, cmd := range due {
			if search := d.Update(cmd()); search != nil {
				d.Update(search())
			}
		}
		if len(scans) != 1 || scans[0] != q {
			t.Errorf("typing %q scanned the sessions for %q, want once for the whole query", q, scans)
		}
		var ids []string
		for _, s := range d.visible() {
			ids = append(ids, s.ID)
		}
		return ids
	}
	if got := found(`paid_cents":20000`); len(got) != 1 || got[0] != edited {
		t.Errorf("content search for the edited result found %v, want only %s (not %s)", got, edited, parent)
	}
	if got := found(`paid_cents":18000`); len(got) != 1 || got[0] != parent {
		t.Errorf("content search for the original result found %v, want only %s", got, parent)
	}
	if got := found(`nowhere-in-any-session`); len(got) != 0 {
		t.Errorf("a text in no session found %v", got)
	}
	contains(t, d.View(200, 30), `no session matches "nowhere-in-any-session" (of 2 stored)`)
}

// A fork sits under the session it was made from (as `modelwire
// sessions` nests it, with the same SessionTree), a fork of a fork one
// step further in, whatever the sort puts between them; a fork whose
// parent the search hides stands on its own.
func TestSessionsListNestsForks(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 10, 0, 0, 0, time.Local)
	info := func(id string, h int, parent string) store.SessionInfo {
		return store.SessionInfo{ID: id, CreatedAt: t0.Add(time.Duration(h) * time.Hour), Status: "done", Scenario: "refund",
			Protocol: "openai-responses", Provider: "sim", ParentID: parent}
	}
	km := DefaultKeyMap()
	d := newSessionsDialog(newCommon("dark", true, false, nil), &km)
	d.setList([]store.SessionInfo{
		info("1aaaaaaaaaaa", 0, ""), info("1ppppppppppp", 1, ""), info("1xxxxxxxxxxx", 2, ""),
		info("1fffffffffff", 3, "1ppppppppppp"), info("1ggggggggggg", 4, "1fffffffffff"),
	}, nil)
	var ids []string
	for _, s := range d.visible() {
		ids = append(ids, s.ID[:2])
	}
	if got := strings.Join(ids, " "); got != "1x 1p 1f 1g 1a" {
		t.Errorf("newest first, forks under their parents: %s, want 1x 1p 1f 1g 1a", got)
	}
	// On screen: the fork in the row under its parent, after ↳; the fork
	// of the fork a cell further in.
	view := screenText(d.View(120, 30))
	row := func(id string) int { return strings.Index(view, id) }
	if !(row("1ppppppppppp") < row("↳ 1fffffffffff") && row("↳ 1fffffffffff") < row("↳ 1ggggggggggg") && row("1ggggggggggg") < row("1aaaaaaaaaaa")) {
		t.Errorf("the forks are not under their parents:\n%s", view)
	}
	contains(t, view, "│   1ppppppppppp    06-01 11:00", "│   ↳ 1fffffffffff  06-01 13:00", "│    ↳ 1ggggggggggg 06-01 14:00")
	// Searching for the fork alone: no parent above it to sit under.
	d.HandleKey(key1("/"), &km)
	for _, r := range "1ffff" {
		d.HandleKey(key1(string(r)), &km)
	}
	d.HandleKey(key1("enter"), &km)
	if s := screenText(d.View(120, 30)); !strings.Contains(s, "▸ 1fffffffffff   06-01") || strings.Contains(s, "↳") {
		t.Errorf("a fork listed without its parent:\n%s", s)
	}
}

// The list's key line names the keys the list has, from its key map:
// enter replays (it does not "select / edit source", the assembly
// panel's); and every key the line shows does something in the list.
func TestSessionsListKeyLine(t *testing.T) {
	d, view := sessionsView(t, 400)
	s := view()
	contains(t, s, "enter replay", "/ search", "m mark for diff", "esc close")
	if strings.Contains(s, "edit source") {
		t.Errorf("the key line offers the assembly panel's enter:\n%s", s)
	}
	km := DefaultKeyMap()
	for _, b := range d.Bindings(&km) {
		d, _ := sessionsView(t, 400)
		d.sel = 1
		type state struct {
			sel, sortBy, marked int
			desc, editing       bool
		}
		snap := func() state { return state{d.sel, d.sortBy, len(d.marked), d.desc, d.editing} }
		before := snap()
		k := b.Keys()[0]
		act, _ := d.HandleKey(key1(k), &km)
		if act == nil && snap() == before {
			t.Errorf("%q (%s %s) is on the key line but does nothing in the list", k, b.Help().Key, b.Help().Desc)
		}
		if k == "enter" {
			if _, ok := act.(actOpenReplay); !ok {
				t.Errorf("enter gave %T, want the replay", act)
			}
		}
	}
}

// At 80 columns (the dialog gets 78) the list keeps the PROTOCOL
// column: the scenario column is cut to make room, and no column name is.
func TestSessionsListKeepsProtocolAt80(t *testing.T) {
	d, _ := sessionsView(t, 78)
	s := screenText(d.View(78, 30))
	contains(t, s, "ID", "SCENARIO/APP", "PROTOCOL", "STATUS", "FAILED", "anthropic-messages", "openai-responses", "running")
	for _, line := range strings.Split(s, "\n") {
		if w := ansi.StringWidth(line); w > 78 {
			t.Errorf("line of %d cells: %q", w, line)
		}
	}
	// Wider, the scenario column is whole again.
	d, _ = sessionsView(t, 200)
	contains(t, d.View(200, 30), "refund/wrong-cap       ")
}
