package proxy

import (
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/timeline"
)

// TestFailingExchangeReplays: a proxied exchange that failed replays as
// the one turn it was — its verdict is the exchange's, not a
// regeneration that would add a turn at the end.
func TestFailingExchangeReplays(t *testing.T) {
	for _, fault := range []string{"server-error", "disconnect-mid-text"} {
		t.Run(fault, func(t *testing.T) {
			r := newRig(t, fault, Options{})
			send(t, r.url, adapters.OpenAIChat, wire(t, adapters.OpenAIChat, 3, fault != "server-error"), sdkKey)
			sessions := r.stop()
			if len(sessions) != 1 || sessions[0].Status != store.StatusFailed {
				t.Fatalf("%d sessions recorded", len(sessions))
			}
			db, err := store.Open(r.dbPath)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			rep, err := timeline.NewReplayer(db, sessions[0].ID, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := rep.Seek(rep.Len()); err != nil {
				t.Fatal(err)
			}
			st := rep.State()
			if len(st.Turns) != 1 || rep.Turns() != 1 || st.Turns[0].Regenerates != nil {
				t.Fatalf("the replay shows %d turns (%d counted) for one exchange", len(st.Turns), rep.Turns())
			}
			if st.Status != store.StatusFailed || session.FirstFailure(st.Layers) == "" {
				t.Fatalf("replayed status %s, layers %+v", st.Status, st.Layers)
			}
		})
	}
}
