package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/app"
	"github.com/modelwire/modelwire/collect"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
)

// otlpChat is an OTLP/JSON request holding one trace: an invoke_agent
// root and a chat span whose reply is text (captured as
// gen_ai.output.messages), with usage.
func otlpChat(trace, text string) []byte {
	t0 := time.Now().Add(-time.Second)
	attr := func(k string, v any) map[string]any {
		if n, ok := v.(int); ok {
			return map[string]any{"key": k, "value": map[string]any{"intValue": fmt.Sprint(n)}}
		}
		return map[string]any{"key": k, "value": map[string]any{"stringValue": v}}
	}
	out, _ := json.Marshal([]any{map[string]any{"role": "assistant", "parts": []any{map[string]any{"type": "text", "content": text}}, "finish_reason": "stop"}})
	span := func(id, parent, name string, ms int, attrs ...map[string]any) map[string]any {
		s := map[string]any{"traceId": trace, "spanId": id, "name": name, "startTimeUnixNano": fmt.Sprint(t0.UnixNano()),
			"endTimeUnixNano": fmt.Sprint(t0.Add(time.Duration(ms) * time.Millisecond).UnixNano()), "attributes": attrs}
		if parent != "" {
			s["parentSpanId"] = parent
		}
		return s
	}
	b, _ := json.Marshal(map[string]any{"resourceSpans": []any{map[string]any{
		"resource": map[string]any{"attributes": []any{attr("service.name", "support-bot")}},
		"scopeSpans": []any{map[string]any{"spans": []any{
			span("00f067aa0ba902b7", "", "invoke_agent support", 800, attr("gen_ai.operation.name", "invoke_agent"), attr("gen_ai.agent.name", "support")),
			span("00f067aa0ba902b8", "00f067aa0ba902b7", "chat gpt-x", 700, attr("gen_ai.operation.name", "chat"), attr("gen_ai.provider.name", "openai"),
				attr("gen_ai.request.model", "gpt-x"), attr("gen_ai.usage.input_tokens", 42), attr("gen_ai.usage.output_tokens", 7),
				attr("gen_ai.output.messages", string(out))),
		}}}}}})
	return b
}

// TestCollectShowsTracesLive: `collect --tui`'s workbench, as the model
// sees it — a Collector reports to a Recording, and a trace sent over
// OTLP/HTTP shows as the live turn, its text and usage, judged on what a
// span can say.
func TestCollectShowsTracesLive(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "collect.db"))
	if err != nil {
		t.Fatal(err)
	}
	rec := NewRecording()
	c := collect.New(collect.Options{DB: db, Observe: rec.Observe, Settle: 10 * time.Millisecond})
	srv := httptest.NewServer(c.Handler())
	m := New(Options{Backend: rec, Library: app.Library{DB: db}, Run: CollectRunConfig("127.0.0.1:4318"), Getenv: func(string) string { return "" }})
	t.Cleanup(func() { m.Close(); srv.Close(); _ = c.Close(context.Background()); _ = db.Close() })
	m.Update(tea.WindowSizeMsg{Width: 140, Height: 44})
	sm, ok := m.Init()().(scenarioMsg)
	if !ok || sm.err != nil {
		t.Fatalf("Init: %+v", sm)
	}
	_, runIt := m.Update(sm)
	go runIt()
	r := &recordingRig{m: m, rec: rec, db: db}

	resp, err := http.Post(srv.URL+collect.TracesPath, "application/json", bytes.NewReader(otlpChat("4bf92f3577b34da6a3ce929d0e0e4736", "Your refund is under review.")))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("post: %v %v", err, resp)
	}
	resp.Body.Close()
	r.pump(t, "the collected turn", validated(1))
	cur := m.d.state.Current()
	if cur == nil || cur.N != 1 || len(cur.Lanes) != 1 || cur.Lanes[0].Kind != adapters.KindMessage || cur.Lanes[0].Text() != "Your refund is under review." {
		t.Fatalf("turn %+v", cur)
	}
	if st := m.d.state.Layers; len(st) != 5 || st[0].Status != session.Pass || st[2].Status != session.Skip {
		t.Errorf("layers %+v", st)
	}
	contains(t, m.View(), "collect 127.0.0.1:4318", "turn 1", "Your refund is under review.")
}

// TestE2ECollectTmux runs `modelwire collect --tui` in a real terminal,
// sends it a trace over OTLP/HTTP and finds the reply on the screen; q
// quits it.
func TestE2ECollectTmux(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	x := &tmux{t: t, name: "mwcollect", sock: filepath.Join(dir, "tmux.sock"), w: 80, h: 24}
	defer x.kill()
	x.start(bin, filepath.Join(dir, "mw.db"), dir, "collect", "--tui", "--http", addr, "--grpc", "")
	x.waitFor("the workbench", 20*time.Second, func(s string) bool { return strings.Contains(s, "collect") })
	var resp *http.Response
	for i := 0; i < 100; i++ {
		if resp, err = http.Post("http://"+addr+collect.TracesPath, "application/json",
			bytes.NewReader(otlpChat("5bf92f3577b34da6a3ce929d0e0e4736", "Refund cap is 130 yuan."))); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("post: %v %v", err, resp)
	}
	resp.Body.Close()
	x.waitFor("the collected reply", 20*time.Second, func(s string) bool { return strings.Contains(s, "Refund cap is 130 yuan.") })
	// The recording runs on: q asks before it stops it.
	x.send("q")
	x.waitFor("the quit question", 5*time.Second, func(s string) bool { return strings.Contains(s, "y yes") || s == "" })
	x.send("y")
	x.waitExit(10 * time.Second)
}
