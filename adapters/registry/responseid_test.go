package registry

import (
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
)

// The proxy re-renders an edited response under the upstream's own id:
// every simulator side must carry ResponseOptions.ResponseID, in a body
// and in a stream alike.
func TestFixedResponseIDIsCarried(t *testing.T) {
	turn := adapters.ModelTurn{Items: []adapters.OutputItem{{Kind: adapters.KindMessage, Text: "hi"}}, Stop: adapters.StopFinal}
	for _, name := range Protocols {
		p, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		simp, ok := p.(adapters.Simulated)
		if !ok {
			continue
		}
		const id = "fixedid0123456789"
		o := adapters.ResponseOptions{ResponseID: id, Seed: 7}
		if got := simp.ResponseID(o); got != id {
			t.Errorf("%s: ResponseID = %q", name, got)
		}
		if b := simp.Body(turn, o); !strings.Contains(string(b), id) {
			t.Errorf("%s: the body does not carry the fixed id: %s", name, b)
		}
		var all strings.Builder
		for _, ev := range simp.StreamEvents(turn, o) {
			all.WriteString(ev.Data)
		}
		if !strings.Contains(all.String(), id) {
			t.Errorf("%s: the stream does not carry the fixed id", name)
		}
	}
}
