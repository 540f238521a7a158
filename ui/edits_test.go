package ui

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/app"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/timeline"
)

// The proxy's edits as a person reads them (edits.go): a proxied session
// whose first response streamed a tool call a rule edited (and its text
// and stop reason), whose second request a rule edited too and carried
// the edited call back in its history — the updates the proxy records
// (proxy/rules_response.go, rules_act.go), built here directly.

const (
	editRule     = `rule 0 "tokyo" (rules.json)`
	editOrigArgs = `{"city":"Paris","unit":"celsius"}`
	editNewArgs  = `{"city":"東京都千代田区","unit":"celsius"}`
)

// proxiedEdits is the session; original says whether the application
// sent the call back as the model proposed it instead of as edited.
func proxiedEdits(original bool) []session.Update {
	at := fixedAt
	var ups []session.Update
	add := func(u session.Update) {
		u.At, u.SessionID = at, "proxied"
		ups = append(ups, u)
	}
	req := func(turn int, body string) {
		add(session.Update{Kind: session.UpAssembled, Turn: turn, Request: &adapters.HTTPRequest{Method: "POST", Path: "/v1/chat/completions", Body: json.RawMessage(body)}})
		add(session.Update{Kind: session.UpAttempt, Turn: turn, Attempt: 1, URL: "http://127.0.0.1:1/v1/chat/completions", HTTPStatus: 200, Timings: &session.Timings{Headers: 3}})
	}
	idx, seq := 0, 0
	step := func(turn int, evs ...adapters.Event) {
		for i := range evs {
			seq++
			evs[i].Seq = seq
		}
		st := adapters.Step{Index: idx, Raw: adapters.RawEvent{Data: `{}`}, Events: evs}
		idx++
		add(session.Update{Kind: session.UpStep, Turn: turn, Attempt: 1, Step: &st, OffsetMS: float64(idx)})
	}
	decide := func(turn int, callID, name, orig, edited, reason, by string) {
		add(session.Update{Kind: session.UpDecision, Turn: turn,
			Proposal: &session.Proposal{Turn: turn, CallID: callID, Name: name, Arguments: json.RawMessage(orig), Known: true},
			Decision: &session.Decision{Kind: session.Edited, Arguments: json.RawMessage(edited), Reason: reason, By: by}})
	}
	tools := `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]`
	req(1, `{"model":"gpt-4o","messages":[{"role":"user","content":"weather?"}],`+tools+`,"stream":true}`)
	step(1, adapters.Event{Type: adapters.EvItemStarted, ItemID: "call_w", CallID: "call_w", Kind: string(adapters.KindToolCall), Name: "get_weather"})
	for _, c := range chunks(editOrigArgs, 10) {
		step(1, adapters.Event{Type: adapters.EvToolArgsDelta, ItemID: "call_w", CallID: "call_w", Delta: c})
	}
	step(1, adapters.Event{Type: adapters.EvItemDone, ItemID: "call_w", CallID: "call_w"},
		adapters.Event{Type: adapters.EvToolProposed, CallID: "call_w", Name: "get_weather", Arguments: json.RawMessage(editOrigArgs)})
	step(1, adapters.Terminal(adapters.StatusCompleted, adapters.StopToolCall, "tool_calls"))
	call := adapters.ToolCall{CallID: "call_w", Name: "get_weather", Arguments: json.RawMessage(editOrigArgs)}
	add(session.Update{Kind: session.UpResponse, Turn: 1, Summary: &adapters.Summary{Terminal: adapters.StatusCompleted, StopReason: adapters.StopToolCall, ToolCalls: []adapters.ToolCall{call}}})
	decide(1, "call_w", "get_weather", editOrigArgs, editNewArgs, "edited by "+editRule, editRule)
	decide(1, session.EditedText, session.EditedText, `"让我查一下。"`, `"我来查一下东京的天气。"`, "edited by "+editRule, editRule)
	decide(1, session.EditedStop, session.EditedStop, `"tool_call"`, `"tool_calls"`, "edited by "+editRule, editRule)
	decide(1, session.ClientBytes, session.ClientBytes, `""`, `"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":\"{\\\"city\\\":\\\"東京都千代田区\\\"}\"}}]}}]}\n\ndata: [DONE]\n"`,
		"the bytes the application got: the edited response, re-encoded by the protocol's simulator side", "proxy")

	back := editNewArgs
	how := session.CarriedEdited
	if original {
		back, how = editOrigArgs, session.CarriedOriginal
	}
	req(2, fmt.Sprintf(`{"model":"gpt-4o-mini","messages":[{"role":"assistant","tool_calls":[{"id":"call_w","function":{"name":"get_weather","arguments":%q}}]}],%s}`, back, tools))
	decide(2, "call_w", "get_weather", editOrigArgs, editNewArgs, session.CarriedNote+"the application's request of turn 2 carried the call back in its history "+how, "history")
	decide(2, session.EditedRequest, session.EditedRequest, `{"model":"gpt-4o"}`, `{"model":"gpt-4o-mini"}`, "request edited by "+editRule, editRule)
	idx = 0
	step(2, adapters.Event{Type: adapters.EvItemStarted, ItemID: "msg_2", Kind: string(adapters.KindMessage)})
	step(2, adapters.Event{Type: adapters.EvTextDelta, ItemID: "msg_2", Delta: "东京晴，22°C。"})
	step(2, adapters.Event{Type: adapters.EvItemDone, ItemID: "msg_2"}, adapters.Terminal(adapters.StatusCompleted, adapters.StopFinal, "stop"))
	add(session.Update{Kind: session.UpResponse, Turn: 2, Summary: &adapters.Summary{Terminal: adapters.StatusCompleted, StopReason: adapters.StopFinal, Text: "东京晴，22°C。"}})
	add(session.Update{Kind: session.UpFinished, Status: session.StatusDone})
	return ups
}

// recordProxied stores the session as the proxy's journal would.
func recordProxied(t testing.TB, path string, original bool) string {
	t.Helper()
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	j := timeline.NewStoreJournal(db, store.SessionMeta{Title: "proxy → api.openai.com", Protocol: adapters.OpenAIChat, Provider: "openai", Source: store.SourceProxy}, true)
	for _, u := range append([]session.Update{{Kind: session.UpStarted, SessionID: "proxied", At: fixedAt}}, proxiedEdits(original)...) {
		if err := j.Record(u); err != nil {
			t.Fatalf("record %s: %v", u.Kind, err)
		}
	}
	return j.SessionID()
}

// checkEditScreens checks the values view of the session the model
// shows, read whole at 80×24: the call's two versions with who edited
// it, the carried note, the request, text and stop edits, and the bytes
// the application received two keys away.
func checkEditScreens(t *testing.T, m *Model, original bool) {
	t.Helper()
	press(m, "v")
	lines := readValues(t, func(func(string) bool) string { return screenText(m.View()) }, func(k ...string) { press(m, k...) })
	text := strings.Join(lines, "\n")
	calls := squash(section(lines, "tool calls"))
	for _, want := range []string{
		"get_weather·call_idcall_w",
		"✎editedby" + squash(editRule),
		"‹argumentsasthemodelproposedthem", `"city":"Paris"`,
		"▶argumentsaseditedby" + squash(editRule) + "(whattheapplicationgot)", `"city":"東京都千代田区"`,
	} {
		if !strings.Contains(calls, want) {
			t.Errorf("the tool calls lack %q:\n%s", want, text)
		}
	}
	if n := strings.Count(calls, "call_id"); n != 1 {
		t.Errorf("%d calls shown, want the one tool call (the edits and the carried note are not calls):\n%s", n, text)
	}
	carried := "theapplicationsenttheeditedcallbackinitshistory(turn2'srequest)"
	if original {
		carried = "✗theapplicationsenttheORIGINALcallbackinitshistory(turn2'srequest),nottheedit"
	}
	if !strings.Contains(calls, carried) {
		t.Errorf("the carried note %q is missing:\n%s", carried, text)
	}
	edits := squash(section(lines, "edits"))
	for _, want := range []string{
		"turn1", "text✎editedby" + squash(editRule), "‹themodelwrote", "让我查一下。", "▶theapplicationgot", "我来查一下东京的天气。",
		"stopreason✎editedby", "tool_call→tool_calls",
		"turn2", "request✎editedby" + squash(editRule), `model"gpt-4o"→"gpt-4o-mini"`,
	} {
		if !strings.Contains(edits, want) {
			t.Errorf("the edits lack %q:\n%s", want, text)
		}
	}
	got := squash(section(lines, "what the application received"))
	if !strings.Contains(got, squash(`"arguments":"{\"city\":\"東京都千代田区\"}"`)) || !strings.Contains(got, "data:[DONE]") {
		t.Errorf("the bytes the application received are not shown whole:\n%s", text)
	}
	// Two keys from the workbench: v, then the part's digit.
	press(m, "3")
	if _, _, _, rows, _ := valuesPage(screenText(m.View())); !strings.Contains(strings.Join(rows, "\n"), "3 WHAT THE APPLICATION RECEIVED\nturn 1") {
		t.Errorf("3 did not go to what the application received:\n%s", screenText(m.View()))
	}
	press(m, "esc")
}

// TestEditsInTheValuesView: live, at 80×24, the values view shows the
// proxy's edits stacked with their labels; the carried note says the
// application sent the edited call back — or warns it sent the original.
func TestEditsInTheValuesView(t *testing.T) {
	for _, original := range []bool{false, true} {
		t.Run(fmt.Sprint("original=", original), func(t *testing.T) {
			m := newLive(t, 80, 24)
			m.Update(updatesMsg{gen: m.gen, ups: proxiedEdits(original)})
			checkEditScreens(t, m, original)
		})
	}
}

// TestEditsInAReplay: the stored session replayed to its end shows the
// same, who edited included (a stored decision keeps it in its reason).
func TestEditsInAReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mw.db")
	id := recordProxied(t, path, false)
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	r, err := app.Library{DB: db}.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	rep := newReplay(r)
	m := New(Options{Library: app.Library{DB: db}})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.Update(replayMsg{gen: m.repGen, rep: rep})
	settle(m, m.seek(rep.Entries))
	checkEditScreens(t, m, false)
}

// TestEditsSideBySide: a wide values view puts the two versions in two
// columns whose separator stands in the same cell on every row, CJK
// included; the lanes do the same when the panel is wide.
func TestEditsSideBySide(t *testing.T) {
	m := newLive(t, 160, 40)
	m.Update(updatesMsg{gen: m.gen, ups: proxiedEdits(false)})
	press(m, "v")
	screen := screenText(m.View())
	var rows []string
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, "│ ") && (strings.Contains(l, `"city"`) || strings.Contains(l, "arguments as") || strings.Contains(l, "让我")) {
			rows = append(rows, l)
		}
	}
	if len(rows) < 2 {
		t.Fatalf("no two columns of arguments:\n%s", screen)
	}
	col := -1
	for _, r := range rows {
		// The dialog's own border is the first │; the columns' is the next.
		i := strings.Index(r, "│ ")
		j := strings.Index(r[i+len("│ "):], "│ ")
		if j < 0 {
			t.Fatalf("no separator in %q", r)
		}
		c := displayWidth(r[:i+len("│ ")+j])
		if col >= 0 && c != col {
			t.Errorf("the columns do not line up (cell %d, then %d):\n%s", col, c, strings.Join(rows, "\n"))
		}
		col = c
	}
	if n := len(rows); n < 3 {
		t.Errorf("%d rows in two columns, want the call's and the text's:\n%s", n, screen)
	}
	if !strings.Contains(screen, `"city": "Paris"`) || !strings.Contains(screen, `"city": "東京都千代田区"`) {
		t.Errorf("the two versions are not side by side:\n%s", screen)
	}
}

// TestEditsInTheLanes: the stream panel says who edited the call and
// shows the edited arguments under the model's; the next turn's lanes say
// its request carried the call back, and how.
func TestEditsInTheLanes(t *testing.T) {
	ups := proxiedEdits(true)
	end1 := 0
	for i, u := range ups {
		if u.Turn == 1 {
			end1 = i + 1
		}
	}
	lanes := func(ups []session.Update) string {
		m := newLive(t, 80, 24)
		m.Update(updatesMsg{gen: m.gen, ups: ups})
		p := m.panels[panelStream].(*streamPanel)
		p.SetSize(78, 60)
		return screenText(strings.Join(p.lines(), "\n"))
	}
	text := lanes(ups[:end1])
	for _, want := range []string{"✎editedby" + squash(editRule), "editedto(whattheapplicationgot", `"city":"東京都千代田区"`, `"city":"Paris"`} {
		if !strings.Contains(squash(text), want) {
			t.Errorf("turn 1's lanes lack %q:\n%s", want, text)
		}
	}
	text = lanes(ups)
	for _, want := range []string{"thisrequestcarriesget_weather·call_idcall_w", "✗theapplicationsenttheORIGINALcallbackinitshistory(thisturn'srequest)"} {
		if !strings.Contains(squash(text), want) {
			t.Errorf("turn 2's lanes lack %q:\n%s", want, text)
		}
	}
}
