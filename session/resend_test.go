package session_test

import (
	"fmt"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/session"
)

// AppendTurn continues an application's request in the protocol's own
// words: turn 2's request with turn 2's answer and results appended is
// turn 3's request, as the encoder writes it whole — in every protocol,
// and for a Responses request that chains on previous_response_id.
func TestAppendTurnIsTheNextRequest(t *testing.T) {
	ids := adapterstest.IDs{
		Item:     func(turn, i int) string { return fmt.Sprintf("fc_%d_%d", turn, i) },
		Call:     func(turn, i int) string { return fmt.Sprintf("call_%d_%d", turn, i) },
		Response: func(turn int) string { return fmt.Sprintf("resp_%d", turn) },
	}
	for _, protocol := range registry.Protocols {
		for _, history := range []adapters.HistoryMode{adapters.HistoryFull, adapters.HistoryPreviousResponse} {
			if history == adapters.HistoryPreviousResponse && protocol != adapters.OpenAIResponses {
				continue
			}
			t.Run(protocol+"/"+string(history), func(t *testing.T) {
				p, err := registry.Lookup(protocol)
				if err != nil {
					t.Fatal(err)
				}
				r2, r3 := adapterstest.RefundRequest(2, ids, true), adapterstest.RefundRequest(3, ids, true)
				r2.History, r3.History = history, history
				w2, err := p.Encode(r2, adapters.ProviderSim)
				if err != nil {
					t.Fatal(err)
				}
				w3, err := p.Encode(r3, adapters.ProviderSim)
				if err != nil {
					t.Fatal(err)
				}
				got, err := session.AppendTurn(protocol, adapters.ProviderSim, w2.Body, r3.Turns[1])
				if err != nil {
					t.Fatal(err)
				}
				if adapters.Canonical(string(got)) != adapters.Canonical(string(w3.Body)) {
					t.Errorf("turn 2's request with turn 2 appended:\n%s\nturn 3's request:\n%s", got, w3.Body)
				}
			})
		}
	}
}
