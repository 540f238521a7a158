package adapters_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
	"github.com/modelwire/modelwire/adapters/registry"
)

// copying hides a decoder's DecodeAppend, so that a Stream takes the path
// that copies every event (Reducer.Apply).
type copying struct{ adapters.Protocol }

func (c copying) NewDecoder() adapters.Decoder {
	return struct{ adapters.Decoder }{c.Protocol.NewDecoder()}
}

// A Stream numbers an AppendDecoder's events in place. Every event of
// every step must be what the copying path gives, and stay so after the
// steps that follow it (a step's events are the caller's to keep); with
// ReuseEvents, each step's events as they are during the step.
func TestStreamInPlaceAgreesWithCopy(t *testing.T) {
	for _, name := range registry.Protocols {
		t.Run(name, func(t *testing.T) {
			p, _ := registry.Lookup(name)
			if _, ok := p.NewDecoder().(adapters.AppendDecoder); !ok {
				t.Skip("not an AppendDecoder")
			}
			sim := p.(adapters.Simulated)
			turn := adapterstest.MixedTurn(4)
			body := adapterstest.SSE(sim.StreamEvents(turn, adapters.ResponseOptions{Model: "m", Seed: 3, IncludeUsage: true}), sim.LineEnd())
			// Events after the terminal and a cut are on the general path too.
			body = append(body, body[:len(body)/3]...)
			decode := func(p adapters.Protocol, reuse bool) ([][]adapters.Event, adapters.Summary) {
				st := adapters.NewStream(p)
				if reuse {
					st.ReuseEvents()
				}
				var steps [][]adapters.Event
				if err := adapters.ReadStream(p, st, bytes.NewReader(body), func(s adapters.Step) error {
					if reuse {
						s.Events = append([]adapters.Event{}, s.Events...) // a copy: the storage is reused
					}
					steps = append(steps, s.Events)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				return steps, st.Summary()
			}
			got, gotSum := decode(p, false)
			want, wantSum := decode(copying{p}, false)
			reused, reusedSum := decode(p, true)
			if len(got) != len(want) || len(reused) != len(want) {
				t.Fatalf("%d steps in place, %d copying, %d reusing", len(got), len(want), len(reused))
			}
			if !reflect.DeepEqual(reused, want) || !reflect.DeepEqual(reusedSum, wantSum) {
				t.Fatal("the events or the summary differ when the events' storage is reused")
			}
			n := 0
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("step %d: in place\n%+v\ncopying\n%+v", i, got[i], want[i])
				}
				n += len(got[i])
			}
			if !reflect.DeepEqual(gotSum, wantSum) {
				t.Fatalf("summary in place %+v, copying %+v", gotSum, wantSum)
			}
			if n < 500 || wantSum.Terminal != adapters.StatusCompleted {
				t.Fatalf("%d events, terminal %s: the stream did not decode", n, wantSum.Terminal)
			}
		})
	}
}
