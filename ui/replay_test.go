package ui

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/app"
	"github.com/modelwire/modelwire/jsonl"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/timeline"
	"github.com/modelwire/modelwire/transport"
)

// recordFixture records the scripted refund session through the store
// journal, as a live workbench session would be, and returns the store.
func recordFixture(t *testing.T) (*store.DB, string, []session.Update, *session.Scenario) {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "mw.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	sc := refund(t)
	rc := DefaultRunConfig()
	ups := scriptedSession(t, sc, rc)
	meta := app.Meta(rc.setup(sc), transport.Provider{Name: "sim", BaseURL: "http://127.0.0.1:1"}, store.SourceTUI, "test")
	j := timeline.NewStoreJournal(db, meta, rc.Stream)
	for _, u := range ups {
		if err := j.Record(u); err != nil {
			t.Fatalf("record %s: %v", u.Kind, err)
		}
	}
	return db, j.SessionID(), ups, sc
}

// entriesOf counts the store entries an update becomes.
func entriesOf(u session.Update) int {
	switch u.Kind {
	case session.UpStep:
		if u.Step.Index < 0 && len(u.Step.Events) == 0 {
			return 0
		}
		return max(1, len(u.Step.Events))
	case session.UpDecision, session.UpResult, session.UpValidated:
		return 1
	}
	return 0
}

// panelsOf renders the panels that show the session itself.
func panelsOf(m *Model) map[panelID]string {
	out := map[panelID]string{}
	for _, id := range []panelID{panelStream, panelValidation, panelLog} {
		out[id] = m.framePanel(id, m.lay.panels[id])
	}
	return out
}

// TestReplayEqualsLive: the screen at entry N of a replay equals the live
// screen right after event N, for every N at which the live session had
// folded a whole update — but not yet what opens the next turn (its
// assembly and attempt), which the replay shows with the turn's first
// entry (issue 27).
func TestReplayEqualsLive(t *testing.T) {
	db, id, ups, _ := recordFixture(t)
	r, err := app.Library{DB: db}.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	rep := newReplay(r)
	want := 0
	for _, u := range ups {
		want += entriesOf(u)
	}
	if rep.Entries != want {
		t.Fatalf("replay has %d entries, the session made %d", rep.Entries, want)
	}

	live := New(Options{Getenv: func(string) string { return "" }})
	live.Update(tea.WindowSizeMsg{Width: 150, Height: 50})
	live.d.scenario = rep.Scenario
	live.running = false
	replay := New(Options{Library: app.Library{DB: db}})
	replay.Update(tea.WindowSizeMsg{Width: 150, Height: 50})
	replay.Update(replayMsg{gen: replay.repGen, rep: rep})
	if replay.mode != modeReplay {
		t.Fatal("not in replay mode")
	}
	// The replay's timeline bar takes a row: give its panels the live
	// rectangles so the frames are comparable.
	replay.lay = live.lay
	for id, r := range replay.lay.panels {
		st := replay.c.Styles.Panel
		replay.panels[id].SetSize(r.w-st.GetHorizontalFrameSize(), r.h-st.GetVerticalFrameSize()-1)
	}

	n, compared := 0, 0
	turns, opening := 0, false // the turns the live session opened; one is opening
	opens := func(u session.Update) bool {
		return n > 0 && (u.Kind == session.UpRegenerate || u.Kind == session.UpAssembled && u.Turn > turns)
	}
	for i, u := range ups {
		if opens(u) {
			opening = true
		}
		if u.Kind == session.UpAssembled {
			turns = max(turns, u.Turn)
		}
		live.Update(updatesMsg{gen: live.gen, ups: []session.Update{u}})
		n += entriesOf(u)
		if entriesOf(u) > 0 {
			opening = false
		}
		// Compare once every update before the next entry is folded,
		// those that open a turn excepted.
		if opening || i+1 < len(ups) && entriesOf(ups[i+1]) == 0 && !opens(ups[i+1]) {
			continue
		}
		settle(replay, replay.seek(n))
		lp, rp := panelsOf(live), panelsOf(replay)
		for id := range lp {
			if lp[id] != rp[id] {
				ll, rl := strings.Split(lp[id], "\n"), strings.Split(rp[id], "\n")
				for k := range min(len(ll), len(rl)) {
					if ll[k] != rl[k] {
						t.Logf("first difference, line %d:\nlive   %q\nreplay %q", k, ll[k], rl[k])
						break
					}
				}
				t.Fatalf("entry %d (after %s): %v panel differs\nlive:\n%s\nreplay:\n%s", n, u.Kind, id, screenText(lp[id]), screenText(rp[id]))
			}
		}
		compared++
	}
	if compared < 50 {
		t.Fatalf("compared only %d positions", compared)
	}
	contains(t, replay.View(), "needs_review", "13000", "5/5 pass")
}

func TestReplayCursorKeys(t *testing.T) {
	db, id, _, _ := recordFixture(t)
	m := New(Options{Library: app.Library{DB: db}})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	msgs := run(m.loadReplay(id))
	var opened tea.Cmd
	for _, msg := range msgs {
		_, cmd := m.Update(msg)
		if msg, ok := msg.(replayMsg); ok && msg.err == nil {
			opened = cmd
		}
	}
	if m.mode != modeReplay || m.cur == nil {
		t.Fatal("not replaying")
	}
	// The scrubber's marks come in a command of their own, after the
	// replay opened.
	if len(m.rep.Proposals) != 0 {
		t.Fatal("the marks were read before the replay opened")
	}
	for _, msg := range run(opened) {
		if msg, ok := msg.(marksMsg); ok {
			m.Update(msg)
		}
	}
	settle(m, press(m, "right", "l"))
	if m.cur.pos != 2 {
		t.Fatalf("pos %d after two steps", m.cur.pos)
	}
	settle(m, press(m, "left"))
	if m.cur.pos != 1 {
		t.Fatalf("pos %d after a step back", m.cur.pos)
	}
	settle(m, press(m, "]"))
	t2 := m.cur.pos
	if m.cur.turnOf(t2) != 2 {
		t.Fatalf("] went to %d (turn %d), want turn 2", t2, m.cur.turnOf(t2))
	}
	settle(m, press(m, "["))
	if m.cur.turnOf(m.cur.pos) != 1 {
		t.Fatalf("[ went to turn %d", m.cur.turnOf(m.cur.pos))
	}
	settle(m, press(m, "G"))
	if m.cur.pos != m.rep.Entries {
		t.Fatal("G should go to the end")
	}
	contains(t, m.View(), "needs_review", "13000")
	settle(m, press(m, "g"))
	if m.cur.pos != 0 || len(m.d.state.Layers) != 0 {
		t.Fatal("g should go to the start")
	}
	// Play: a tick moves one entry; a stale tick does nothing.
	// The scrubber marks the three proposals and the turn boundaries.
	if len(m.rep.Proposals) != 3 || !strings.Contains(m.timeline(), "◆") || !strings.Contains(m.timeline(), "┃") {
		t.Errorf("scrubber: %d proposals marked: %s", len(m.rep.Proposals), m.timeline())
	}
	// + and - step the speed from ×0.25 to ×16, and stop there.
	for i := 0; i < 10; i++ {
		press(m, "-")
	}
	if replaySpeeds[m.speed] != 0.25 {
		t.Fatalf("speed ×%g after -", replaySpeeds[m.speed])
	}
	contains(t, m.View(), "×0.25")
	for i := 0; i < 10; i++ {
		press(m, "+")
	}
	if replaySpeeds[m.speed] != 16 {
		t.Fatalf("speed ×%g after +", replaySpeeds[m.speed])
	}
	press(m, "space")
	if !m.playing {
		t.Fatal("space should play")
	}
	_, cmd := m.Update(playTickMsg{gen: m.repGen, play: m.play})
	settle(m, cmd)
	if m.cur.pos != 1 {
		t.Fatalf("a tick moved to %d", m.cur.pos)
	}
	_, cmd = m.Update(playTickMsg{gen: m.repGen, play: m.play - 1})
	settle(m, cmd)
	if m.cur.pos != 1 {
		t.Fatal("a stale tick moved the cursor")
	}
	press(m, "space")
	if m.playing {
		t.Fatal("space should pause")
	}
	contains(t, m.View(), "entry 1/", "×16")
}

func TestSessionsBrowser(t *testing.T) {
	db, id, _, _ := recordFixture(t)
	m := New(Options{Library: app.Library{DB: db}, ExportDir: t.TempDir()})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	for _, msg := range run(press(m, "s")) {
		m.Update(msg)
	}
	d, ok := m.top().(*sessionsDialog)
	if !ok || len(d.all) != 1 {
		t.Fatalf("browser %T with %d sessions", m.top(), len(d.all))
	}
	contains(t, m.View(), id, "refund", "done")
	// Filter that matches nothing, then clear it.
	press(m, "/", "z", "z", "z", "enter")
	if len(d.visible()) != 0 {
		t.Fatal("filter should hide the session")
	}
	press(m, "/", "backspace", "backspace", "backspace", "enter")
	// Export: the file in the export directory holds exactly what the
	// store exports for that session, and the status line says where.
	msgs := run(press(m, "x"))
	if len(msgs) != 1 {
		t.Fatalf("export gave %v", msgs)
	}
	e, ok := msgs[0].(exportedMsg)
	if !ok || e.err != nil || e.id != id || filepath.Dir(e.path) != m.opts.ExportDir {
		t.Fatalf("export gave %+v", msgs[0])
	}
	got, err := os.ReadFile(e.path)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := jsonl.Export(db, &want, id); err != nil {
		t.Fatal(err)
	}
	if want.Len() == 0 || !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("the exported file (%d bytes) differs from the store's export (%d bytes)", len(got), want.Len())
	}
	m.Update(e)
	contains(t, m.View(), "exported "+id)
	// Delete asks first; n keeps it.
	press(m, "d")
	if _, ok := m.top().(*confirmDialog); !ok {
		t.Fatal("d should ask")
	}
	press(m, "n")
	if list, _ := db.ListSessions(store.Filter{}); len(list) != 1 {
		t.Fatal("n deleted the session")
	}
	// Enter replays it.
	msgs = run(press(m, "enter"))
	for _, msg := range msgs {
		m.Update(msg)
	}
	if m.mode != modeReplay || m.rep.Info.ID != id {
		t.Fatal("enter should replay the session")
	}
	// Delete for real from a new browser.
	for _, msg := range run(press(m, "s")) {
		m.Update(msg)
	}
	press(m, "d")
	for _, msg := range run(press(m, "y")) {
		m.Update(msg)
	}
	if list, _ := db.ListSessions(store.Filter{}); len(list) != 0 {
		t.Fatal("y should delete the session")
	}
}

// TestReplayEventOrder: at the end of a replay the workbench's event log
// holds the stored canonical events in the order `replay --json` prints
// them (both come from timeline.Replayer).
func TestReplayEventOrder(t *testing.T) {
	db, id, _, _ := recordFixture(t)
	r, err := app.Library{DB: db}.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	err = r.Each(1, 0, func(e store.Entry) error {
		if e.Attempt != 0 && e.Event != nil {
			want = append(want, fmt.Sprint(e.Turn, " ", e.Type))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	m := New(Options{Library: app.Library{DB: db}})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.Update(replayMsg{gen: m.repGen, rep: newReplay(r)})
	settle(m, press(m, "G"))
	var got []string
	for _, turn := range m.d.state.Turns {
		for _, l := range turn.Log {
			for _, ev := range l.Events {
				got = append(got, fmt.Sprint(turn.N, " ", ev.Type))
			}
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the workbench's event log (%d events) differs from the stored timeline (%d)", len(got), len(want))
	}
}

// settle runs cmd and feeds back the replay seeks it starts, and those
// they start, until none is left (other messages are dropped).
func settle(m *Model, cmd tea.Cmd) {
	for _, msg := range run(cmd) {
		if s, ok := msg.(seekMsg); ok {
			_, next := m.Update(s)
			settle(m, next)
		}
	}
}

// TestReplaySeeksOffTheUpdate: a replay key starts a seek in a command and
// the screen keeps the last state until it lands; keys pressed while it
// runs start no second seek, and the latest target is sought when it
// lands.
func TestReplaySeeksOffTheUpdate(t *testing.T) {
	db, id, _, _ := recordFixture(t)
	m := New(Options{Library: app.Library{DB: db}})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	for _, msg := range run(m.loadReplay(id)) {
		m.Update(msg)
	}
	shown := m.d.state
	first := press(m, "right")
	if first == nil || m.cur.pos != 0 || m.d.state != shown {
		t.Fatalf("a step changed the screen before its seek ran (pos %d)", m.cur.pos)
	}
	// Four more steps and a turn while the first seek runs: no command.
	if cmd := press(m, "right", "right", "right", "right"); run(cmd) != nil {
		t.Fatalf("keys pressed during a seek started %v", run(cmd))
	}
	msgs := run(first)
	if len(msgs) != 1 {
		t.Fatalf("the seek gave %v", msgs)
	}
	landed := msgs[0].(seekMsg)
	if landed.pos != 1 {
		t.Fatalf("the first seek landed at %d", landed.pos)
	}
	_, next := m.Update(landed)
	if m.cur.pos != 1 || m.d.state != landed.state || next == nil {
		t.Fatalf("at %d after the first seek landed; the next target should be sought", m.cur.pos)
	}
	settle(m, next)
	if m.cur.pos != 5 || m.cur.busy {
		t.Fatalf("at %d after five steps (busy %v)", m.cur.pos, m.cur.busy)
	}
	// The state shown is the one a seek straight there gives.
	r, err := app.Library{DB: db}.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Seek(5); err != nil {
		t.Fatal(err)
	}
	if m.d.state.Applied != r.State().Applied || m.d.state.Events != r.State().Events {
		t.Fatalf("shown: %d updates, %d events; the replayer at 5: %d, %d", m.d.state.Applied, m.d.state.Events,
			r.State().Applied, r.State().Events)
	}
	// A seek of a session replaced meanwhile lands nowhere.
	m.repGen++
	m.Update(seekMsg{gen: m.repGen - 1, pos: 9, state: session.NewState()})
	if m.cur.pos != 5 {
		t.Fatal("a stale seek moved the cursor")
	}
}

// The replay's header names the turn the panels show, counted from 1 as
// they count it: at every position, the start included (it said turn 0
// there while the panels said turn 1).
func TestReplayHeaderTurnIsThePanels(t *testing.T) {
	db, id, _, _ := recordFixture(t)
	m := New(Options{Library: app.Library{DB: db}})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 40})
	for _, msg := range run(m.loadReplay(id)) {
		m.Update(msg)
	}
	turnIn := regexp.MustCompile(`turn (\d+)`)
	for p := 0; p <= m.rep.Entries; p++ {
		settle(m, m.seek(p))
		head := turnIn.FindStringSubmatch(screenText(m.header()))
		panel := turnIn.FindStringSubmatch(screenText(m.panelTitle(panelStream)))
		if head == nil || panel == nil || head[1] != panel[1] || head[1] == "0" {
			t.Fatalf("entry %d: the header says %q, the stream panel %q", p, screenText(m.header()), screenText(m.panelTitle(panelStream)))
		}
	}
}

// recordInterrupted records the fixture's updates up to and including
// the first that until accepts, as a workbench session that was then
// stopped (it lists as interrupted).
func recordInterrupted(t *testing.T, until func(session.Update) bool, edit func(*session.Update)) (*store.DB, string) {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "mw.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	sc := refund(t)
	rc := DefaultRunConfig()
	meta := app.Meta(rc.setup(sc), transport.Provider{Name: "sim", BaseURL: "http://127.0.0.1:1"}, store.SourceTUI, "test")
	j := timeline.NewStoreJournal(db, meta, rc.Stream)
	for _, u := range scriptedSession(t, sc, rc) {
		if edit != nil {
			edit(&u)
		}
		if err := j.Record(u); err != nil {
			t.Fatalf("record %s: %v", u.Kind, err)
		}
		if until(u) {
			break
		}
	}
	if err := j.Interrupt(); err != nil {
		t.Fatal(err)
	}
	return db, j.SessionID()
}

// Replaying an interrupted session says interrupted wherever the replay
// stands — never running: nothing runs, and the record ends where it
// stopped — with the error its last attempt was stored with, if any.
func TestReplayOfAnInterruptedSession(t *testing.T) {
	for _, c := range []struct {
		name   string
		until  func(session.Update) bool
		edit   func(*session.Update)
		reason string
	}{
		{name: "at a proposal", until: func(u session.Update) bool { return u.Kind == session.UpProposal }},
		{name: "mid-stream", until: func(u session.Update) bool { return u.Kind == session.UpResponse },
			edit: func(u *session.Update) {
				if u.Kind == session.UpResponse {
					u.Attempt, u.Err = 1, "read: connection reset by peer"
				}
			}, reason: "read: connection reset by peer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, id := recordInterrupted(t, c.until, c.edit)
			m := New(Options{Library: app.Library{DB: db}})
			m.Update(tea.WindowSizeMsg{Width: 160, Height: 40})
			for _, msg := range run(m.loadReplay(id)) {
				m.Update(msg)
			}
			if m.mode != modeReplay {
				t.Fatalf("not replaying: %s", m.status.text)
			}
			for p := 0; p <= m.rep.Entries; p++ {
				settle(m, m.seek(p))
				v := screenText(m.framePanel(panelValidation, m.lay.panels[panelValidation]))
				if !strings.Contains(v, "session interrupted") || strings.Contains(v, "running") {
					t.Fatalf("entry %d of %d: the validation panel:\n%s", p, m.rep.Entries, v)
				}
				if p == m.rep.Entries && c.reason != "" {
					// The reason, on the line under the status.
					ls := strings.Split(v, "\n")
					under := false
					for i := 1; i < len(ls); i++ {
						under = under || strings.Contains(ls[i-1], "session interrupted") && strings.Contains(ls[i], c.reason)
					}
					if !under {
						t.Errorf("at the end the reason %q is not under the status:\n%s", c.reason, v)
					}
				}
			}
		})
	}
}
