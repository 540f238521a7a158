package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/store"
)

// TestE2ELongReplay: `modelwire replay ID` on a session of 200,000 entries
// (200 turns of 1,000: long enough that the replay keeps only the shown
// turn's detail) opens at once, G lands on the end, [ on the last turn's
// start, and the scrubber marks the turns; the validation panel lists the
// last turns and says how many it leaves out.
func TestE2ELongReplay(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "mw.db")
	id := recordLongAt(t, path, 200, 1000)
	tm := &tmux{t: t, name: fmt.Sprintf("mwlong%d", os.Getpid()), sock: filepath.Join(dir, "tmux.sock")}
	t.Cleanup(tm.kill)
	tm.start(bin, path, dir, "replay", id[:8])
	tm.waitFor("the replay", 20*time.Second, has("modelwire replay", "entry 0/200000"))
	tm.sendText("G")
	s := tm.waitFor("the end", 20*time.Second, has("entry 200000/200000", "· done"))
	if bar := strings.Split(s, "\n")[1]; strings.Count(bar, "┃") < 50 {
		t.Errorf("the scrubber should mark the turns ┃: %q", bar)
	}
	tm.sendText("[")
	tm.waitFor("the last turn's start", 20*time.Second, has("entry 199001/200000"))
	tm.send("Tab")
	tm.waitFor("the validation panel", 10*time.Second, has("◆ Validation"))
	tm.sendText("z")
	tm.waitFor("the validation panel's turns", 20*time.Second, has("… 149 earlier turns"))
	tm.sendText("q")
	tm.waitExit(10 * time.Second)
}

// recordLongAt records a session as recordLong does, into the database at
// path, and closes it.
func recordLongAt(t *testing.T, path string, turns, perTurn int) string {
	t.Helper()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	db, err := store.Open(path)
	must(err)
	w, err := db.CreateSession(store.SessionMeta{Title: "long", Protocol: adapters.OpenAIResponses, Provider: "sim", Source: store.SourceRun})
	must(err)
	for turn := 1; turn <= turns; turn++ {
		rec, err := w.StartAttempt(turn, store.AttemptMeta{Method: "POST", URL: "http://127.0.0.1/v1/responses", Stream: true})
		must(err)
		item := fmt.Sprintf("msg_%d", turn)
		must(rec.AppendAt(time.Millisecond, adapters.Step{Index: 0, Raw: adapters.RawEvent{Event: "response.output_item.added", Data: `{}`},
			Events: []adapters.Event{{Seq: 1, Type: adapters.EvItemStarted, ItemID: item, Kind: string(adapters.KindMessage)}}}))
		for i := 1; i < perTurn-1; i++ {
			must(rec.AppendAt(time.Millisecond, adapters.Step{Index: i, Raw: adapters.RawEvent{Event: "response.output_text.delta", Data: `{"delta":" 退款"}`},
				Events: []adapters.Event{{Seq: i + 1, Type: adapters.EvTextDelta, ItemID: item, Delta: " 退款"}}}))
		}
		must(rec.AppendAt(time.Millisecond, adapters.Step{Index: perTurn - 1, Raw: adapters.RawEvent{Event: "response.completed", Data: `{}`},
			Events: []adapters.Event{adapters.Terminal(adapters.StatusCompleted, adapters.StopFinal, "completed")}}))
		must(rec.Finish(nil))
	}
	must(w.Finish(store.StatusDone))
	must(db.Close())
	return w.ID()
}
