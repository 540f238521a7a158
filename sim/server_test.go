package sim_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/transport"
)

// start serves the refund case with the given faults.
func start(t *testing.T, faults string, opts sim.Options) string {
	t.Helper()
	sc, err := samples.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.ParseFaults(faults)
	if err != nil {
		t.Fatal(err)
	}
	opts.Scenario, opts.Lookup, opts.Faults = sc, samples.Lookup, f
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	base, err := sim.New(opts).Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return base
}

type exchange struct {
	status int
	header http.Header
	events []adapters.Event
	sum    adapters.Summary
	body   string
}

// firstTurn sends the refund case's first request (or turn n's, from the
// scenario named) as an SDK would and decodes the answer.
func send(t *testing.T, base, protocol string, scenario string, stream bool) exchange {
	t.Helper()
	sc, _ := samples.Lookup("refund")
	p, _ := registry.Lookup(protocol)
	req := sc.Request(stream, adapters.HistoryFull)
	wire, err := p.Encode(req, adapters.ProviderSim)
	if err != nil {
		t.Fatal(err)
	}
	hreq, _ := http.NewRequest(wire.Method, transport.Provider{BaseURL: base}.URL(wire.Path), bytes.NewReader(wire.Body))
	for k, v := range wire.Headers {
		hreq.Header.Set(k, v)
	}
	if scenario != "" {
		hreq.Header.Set(sim.ScenarioHeader, scenario)
	}
	transport.Provider{Key: "k"}.Authorize(hreq.Header, protocol)
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	ex := exchange{status: resp.StatusCode, header: resp.Header}
	st := adapters.NewStream(p)
	if resp.StatusCode != 200 {
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		ex.body = b.String()
		return ex
	}
	if !stream {
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		ex.events = st.FeedBody(b.Bytes())
	} else {
		_ = adapters.ReadStream(p, st, resp.Body, func(s adapters.Step) error {
			ex.events = append(ex.events, s.Events...)
			return nil
		})
	}
	ex.sum = st.Summary()
	return ex
}

func hasDiag(ex exchange, kind string) bool {
	for _, d := range ex.sum.Diagnostics {
		if d.Kind == kind {
			return true
		}
	}
	return false
}

func hasType(ex exchange, t adapters.EventType) bool {
	for _, e := range ex.events {
		if e.Type == t {
			return true
		}
	}
	return false
}

// Each fault produces on the wire what the real failure looks like, on
// every protocol, and fires once unless :always.
func TestFaults(t *testing.T) {
	for _, p := range registry.Protocols {
		t.Run(p, func(t *testing.T) {
			check := func(fault string, fn func(t *testing.T, ex exchange)) {
				t.Run(fault, func(t *testing.T) {
					base := start(t, fault, sim.Options{})
					fn(t, send(t, base, p, "", true))
				})
			}
			check("rate-limit", func(t *testing.T, ex exchange) {
				if ex.status != 429 || ex.header.Get("Retry-After") != "1" {
					t.Fatalf("status %d, Retry-After %q", ex.status, ex.header.Get("Retry-After"))
				}
				e := mustProtocol(p).DecodeError(ex.status, ex.header, []byte(ex.body))
				if e.Message == "" || e.RetryAfterMS != 1000 {
					t.Fatalf("error %+v from %s", e, ex.body)
				}
			})
			check("server-error", func(t *testing.T, ex exchange) {
				if ex.status != 500 {
					t.Fatalf("status %d", ex.status)
				}
			})
			check("disconnect-mid-args", func(t *testing.T, ex exchange) {
				if ex.sum.Terminal != adapters.StatusUnknown || len(ex.sum.ToolCalls) != 0 || hasType(ex, adapters.EvToolProposed) {
					t.Fatalf("summary %+v", ex.sum)
				}
				if !hasDiag(ex, adapters.DiagStreamCut) {
					t.Fatalf("no stream_cut: %+v", ex.sum.Diagnostics)
				}
			})
			check("no-terminal", func(t *testing.T, ex exchange) {
				if ex.sum.Terminal != adapters.StatusUnknown || !hasDiag(ex, adapters.DiagStreamCut) {
					t.Fatalf("summary %+v", ex.sum)
				}
				if hasDiag(ex, adapters.DiagReadError) {
					t.Fatal("no-terminal must end the stream cleanly, not break it")
				}
			})
			check("late-event", func(t *testing.T, ex exchange) {
				if !hasDiag(ex, adapters.DiagLateEvent) || ex.sum.Terminal != adapters.StatusCompleted {
					t.Fatalf("summary %+v", ex.sum)
				}
			})
			check("unknown-event", func(t *testing.T, ex exchange) {
				if !hasType(ex, adapters.EvUnknown) || ex.sum.Terminal != adapters.StatusCompleted {
					t.Fatalf("events %+v", ex.events)
				}
			})
			check("malformed-event", func(t *testing.T, ex exchange) {
				if !hasDiag(ex, adapters.DiagMalformedEvent) {
					t.Fatalf("diagnostics %+v", ex.sum.Diagnostics)
				}
			})
			check("error-after-200", func(t *testing.T, ex exchange) {
				if ex.status != 200 || ex.sum.Terminal != adapters.StatusFailed || ex.sum.Error == nil {
					t.Fatalf("status %d summary %+v", ex.status, ex.sum)
				}
			})
			check("truncate", func(t *testing.T, ex exchange) {
				if ex.sum.Terminal != adapters.StatusIncomplete || ex.sum.StopReason != adapters.StopTruncated || len(ex.sum.ToolCalls) != 0 {
					t.Fatalf("summary %+v", ex.sum)
				}
			})
			check("refusal", func(t *testing.T, ex exchange) {
				if ex.sum.Terminal != adapters.StatusRefused || ex.sum.StopReason != adapters.StopRefusal {
					t.Fatalf("summary %+v", ex.sum)
				}
			})
			if p != adapters.Gemini {
				check("duplicate-events", func(t *testing.T, ex exchange) {
					if !hasDiag(ex, adapters.DiagDuplicateEvent) || len(ex.sum.ToolCalls) != 1 {
						t.Fatalf("summary %+v", ex.sum)
					}
					if got := string(ex.sum.ToolCalls[0].Arguments); got != `{"order_id":"O-2048","line_id":"L1"}` {
						t.Fatalf("duplicates changed the arguments: %s", got)
					}
				})
			}
			t.Run("once-then-recovers", func(t *testing.T) {
				base := start(t, "server-error", sim.Options{})
				if ex := send(t, base, p, "", true); ex.status != 500 {
					t.Fatalf("first: %d", ex.status)
				}
				if ex := send(t, base, p, "", true); ex.status != 200 || ex.sum.Terminal != adapters.StatusCompleted {
					t.Fatalf("second: %d %+v", ex.status, ex.sum)
				}
			})
			t.Run("always", func(t *testing.T) {
				base := start(t, "server-error:always", sim.Options{})
				for i := 0; i < 3; i++ {
					if ex := send(t, base, p, "", false); ex.status != 500 {
						t.Fatalf("request %d: %d", i, ex.status)
					}
				}
			})
		})
	}
}

func TestOverloadedIsAnthropicOnly(t *testing.T) {
	base := start(t, "overloaded", sim.Options{})
	if ex := send(t, base, adapters.OpenAIChat, "", true); ex.status != 200 {
		t.Fatalf("openai-chat got %d: the fault must wait for a request it applies to", ex.status)
	}
	ex := send(t, base, adapters.AnthropicMessages, "", true)
	if ex.status != 529 || !strings.Contains(ex.body, `"overloaded_error"`) {
		t.Fatalf("anthropic got %d %s", ex.status, ex.body)
	}
}

// The slow-first-byte and stall faults make the session's own limits fire,
// each reported by name.
func TestLimitsFireByName(t *testing.T) {
	cases := []struct {
		fault, want string
		limits      transport.Timeouts
	}{
		{"slow-first-byte", "first-event timeout", transport.Timeouts{Connect: time.Second, FirstEvent: 50 * time.Millisecond, Idle: time.Second, Total: 5 * time.Second}},
		{"stall", "idle timeout", transport.Timeouts{Connect: time.Second, FirstEvent: time.Second, Idle: 50 * time.Millisecond, Total: 5 * time.Second}},
		{"stall", "total timeout", transport.Timeouts{Connect: time.Second, FirstEvent: time.Second, Idle: time.Minute, Total: 200 * time.Millisecond}},
	}
	for _, c := range cases {
		t.Run(c.fault+"/"+c.want, func(t *testing.T) {
			base := start(t, c.fault, sim.Options{SlowFirstByte: 5 * time.Second, StallFor: 5 * time.Second})
			sc, _ := samples.Lookup("refund")
			s, err := session.New(session.Config{Scenario: sc, Protocol: adapters.AnthropicMessages, Provider: transport.Provider{Name: "sim", BaseURL: base, Key: "k"},
				Stream: true, Policy: session.PolicyAuto, Timeouts: c.limits, Retry: transport.Retry{Max: 0, Base: time.Millisecond, MaxDelay: time.Millisecond}}, nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if res.Layers[0].Status != session.Fail || !strings.Contains(res.Layers[0].Detail, c.want) {
				t.Fatalf("transport layer %+v, want it to name %q", res.Layers[0], c.want)
			}
		})
	}
}

func mustProtocol(name string) adapters.Protocol {
	p, _ := registry.Lookup(name)
	return p
}
