package ui

import (
	"context"
	"errors"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/modelwire/modelwire/workshop"
)

// roomFixture is a room of three: one through, one stuck on a call_id,
// one on tool_choice, with the exercise's steps.
func roomFixture(t *testing.T) workshop.View {
	t.Helper()
	ex, err := workshop.Lookup("refund-3", nil)
	if err != nil {
		t.Fatal(err)
	}
	hint := func(step, check string) (workshop.Text, string) {
		for _, s := range ex.Steps {
			if s.ID == step {
				for _, c := range s.Checks {
					if c.ID == check {
						return c.Hint, c.Section
					}
				}
			}
		}
		t.Fatalf("no check %s/%s", step, check)
		return workshop.Text{}, ""
	}
	bh, bs := hint("order-result", "call-id-matches")
	ch, cs := hint("final-turn", "final-tool-choice")
	return workshop.View{Exercise: ex.Name, Title: ex.Title, Steps: ex.Steps, Participants: []workshop.Row{
		{Participant: "alice", Step: 3, StepID: "final-turn", Passed: 8, Total: 8, OnStep: 12, Requests: 3, SessionID: "aaaa1111bbbb"},
		{Participant: "bob", Step: 2, StepID: "order-result", Passed: 1, Total: 4, LastFail: "call-id-matches", Hint: bh, Section: bs,
			Detail: "the provider answered 400: No tool call found", OnStep: 95, Requests: 2, Request: "tools: [get_order_line] · results: [fc_1→no such call]"},
		{Participant: "卡罗尔carol", Step: 3, StepID: "final-turn", Passed: 7, Total: 8, LastFail: "final-tool-choice", Hint: ch, Section: cs, OnStep: 30, Requests: 3},
	}, Summary: workshop.Summary{MostFailed: "call-id-matches", MostFailedCount: 1, StuckStep: 3, StuckCount: 2}}
}

// loaded is a room model that has read v once, at 80×24.
func loaded(t *testing.T, v workshop.View) *RoomModel {
	t.Helper()
	m := NewRoomModel(func(context.Context) (workshop.View, error) { return v, nil }, "dark", "room http://127.0.0.1:8787 · participants: base URL http://127.0.0.1:8787/v1")
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	msg := m.Init()()
	if _, cmd := m.Update(msg); cmd == nil {
		t.Fatal("a reading does not schedule the next")
	}
	return m
}

func screenLines(t *testing.T, m *RoomModel) []string {
	t.Helper()
	lines := strings.Split(m.View(), "\n")
	if len(lines) != 24 {
		t.Fatalf("%d lines, want 24", len(lines))
	}
	for i, l := range lines {
		if w := lipgloss.Width(l); w > 80 {
			t.Errorf("line %d is %d cells wide: %q", i+1, w, l)
		}
	}
	return lines
}

func TestRoomRowsAt80x24(t *testing.T) {
	m := loaded(t, roomFixture(t))
	s := strings.Join(screenLines(t, m), "\n")
	for _, want := range []string{"workshop refund-3", "alice", "bob", "卡罗尔carol", "8/8", "1/4", "7/8", "call-id-matches", "final-tool-choice",
		"1m35s", "participants: base URL", "failed most: call-id-matches (1)", "most on step 3 (2)", "sort (arrival)"} {
		if !strings.Contains(s, want) {
			t.Errorf("the room lacks %q:\n%s", want, s)
		}
	}
}

func TestRoomSortsAndOpens(t *testing.T) {
	m := loaded(t, roomFixture(t))
	press := func(k string) {
		km := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
		switch k {
		case "enter":
			km = tea.KeyMsg{Type: tea.KeyEnter}
		case "down":
			km = tea.KeyMsg{Type: tea.KeyDown}
		case "esc":
			km = tea.KeyMsg{Type: tea.KeyEsc}
		}
		m.Update(km)
	}
	order := func() string {
		var names []string
		for _, r := range m.rows() {
			names = append(names, r.Participant)
		}
		return strings.Join(names, ",")
	}
	press("s") // by step
	if got := order(); got != "bob,alice,卡罗尔carol" {
		t.Errorf("by step: %s", got)
	}
	press("s") // by checks passed
	if got := order(); got != "bob,卡罗尔carol,alice" {
		t.Errorf("by checks passed: %s", got)
	}
	press("s") // by time on the step, longest first
	if got := order(); got != "bob,卡罗尔carol,alice" {
		t.Errorf("by time on step: %s", got)
	}
	press("s") // back to arrival
	press("down")
	press("enter")
	s := strings.Join(screenLines(t, m), "\n")
	for _, want := range []string{"bob · step 2", "✗ call-id-matches  §13.2.8", "call_id", "the provider answered 400", "the latest request:", "no such call", "expected shape (order-result):", "function_call_output"} {
		if !strings.Contains(s, want) {
			t.Errorf("bob's detail lacks %q:\n%s", want, s)
		}
	}
	press("esc")
	if strings.Contains(m.View(), "expected shape") {
		t.Error("esc did not close the detail")
	}
	press("t") // the next theme (light, then contrast) builds and renders
	press("t")
	if m.theme != "contrast" {
		t.Errorf("theme %s after two t, want contrast", m.theme)
	}
	screenLines(t, m)
}

func TestRoomStaleAndFailedReadings(t *testing.T) {
	m := NewRoomModel(func(context.Context) (workshop.View, error) { return workshop.View{}, errors.New("connection refused") }, "contrast", "")
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.Update(m.Init()())
	if s := m.View(); !strings.Contains(s, "cannot read the room: connection refused") {
		t.Errorf("a failed first reading:\n%s", s)
	}
	m = loaded(t, roomFixture(t))
	m.gen++ // a reading for an earlier generation is dropped
	m.Update(roomMsg{gen: m.gen - 1, view: workshop.View{Exercise: "other"}})
	if m.view.Exercise != "refund-3" {
		t.Error("a stale reading replaced the room")
	}
	m.Update(roomMsg{gen: m.gen, err: errors.New("timeout")})
	if s := m.View(); !strings.Contains(s, "stale: timeout") || !strings.Contains(s, "alice") {
		t.Errorf("a failed later reading keeps the room and says so:\n%s", s)
	}
}
