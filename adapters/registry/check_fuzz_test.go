package registry

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// CheckRequest never panics, whatever the body: every simulator is fed
// mutations of each protocol's refund request (with a follow-up message
// and assistant text, so each reading of the prompt is reached), and what
// it accepts has a tool definition for no tool it does not name.
//
//	go test ./adapters/registry -run '^$' -fuzz FuzzCheckRequest -fuzztime 1m
func FuzzCheckRequest(f *testing.F) {
	type target struct {
		sim  adapters.Simulated
		hr   *adapters.HTTPRequest
		head http.Header
	}
	ids := adapterstest.IDs{
		Call:     func(turn, i int) string { return fmt.Sprintf("call_%d%d", turn, i) },
		Response: func(turn int) string { return fmt.Sprintf("resp_%d", turn) },
	}
	var targets []target
	for _, name := range Protocols {
		p, err := Lookup(name)
		if err != nil {
			f.Fatal(err)
		}
		sim, ok := p.(adapters.Simulated)
		if !ok {
			continue
		}
		req := adapterstest.PromptRefund(ids, true, true)
		req.Model = "gemini-2.5-flash"
		hr, err := p.Encode(req, "")
		if err != nil {
			f.Fatalf("%s: %v", name, err)
		}
		h := http.Header{}
		for k, v := range hr.Headers {
			h.Set(k, v)
		}
		h.Set("anthropic-version", "2023-06-01")
		targets = append(targets, target{sim, hr, h})
		f.Add([]byte(hr.Body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, tg := range targets {
			in, e := tg.sim.CheckRequest(tg.hr.Method, tg.hr.Path, tg.head, body)
			if e != nil {
				continue
			}
			for _, d := range in.ToolDefs {
				found := false
				for _, name := range in.Tools {
					found = found || name == d.Name
				}
				if !found {
					t.Errorf("%T: tool definition %q among tools %q", tg.sim, d.Name, in.Tools)
				}
			}
		}
	})
}
