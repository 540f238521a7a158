package collect_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/cli"
	"github.com/modelwire/modelwire/collect"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/telemetry"
)

// rig is a Collector over a fresh database, its OTLP/HTTP endpoint on an
// httptest server.
type rig struct {
	dir string // the database's directory
	db  *store.DB
	c   *collect.Collector
	srv *httptest.Server
}

func newRig(t *testing.T, o collect.Options) *rig {
	t.Helper()
	dir := t.TempDir()
	db, err := store.Open(filepath.Join(dir, "collected.db"))
	if err != nil {
		t.Fatal(err)
	}
	o.DB = db
	c := collect.New(o)
	srv := httptest.NewServer(c.Handler())
	r := &rig{dir: dir, db: db, c: c, srv: srv}
	t.Cleanup(func() { srv.Close(); _ = c.Close(context.Background()); db.Close() })
	return r
}

// close ends the open sessions so they can be read whole.
func (r *rig) close(t *testing.T) {
	t.Helper()
	r.srv.Close()
	if err := r.c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// sessions are the stored sessions, oldest first.
func sessions(t *testing.T, db *store.DB) []*store.Session {
	t.Helper()
	list, err := db.ListSessions(store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var out []*store.Session
	for i := len(list) - 1; i >= 0; i-- {
		s, err := db.GetSession(list[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// shape is what a person compares between two sessions: each attempt's
// numbering, usage, model, ending and text, each tool call and result.
type shape struct {
	Status   store.Status
	Turns    int
	Attempts []string
	Texts    []string
	Calls    []string
}

func shapeOf(t *testing.T, db *store.DB, s *store.Session) shape {
	t.Helper()
	sh := shape{Status: s.Status, Turns: s.Turns}
	for _, a := range s.Attempts {
		u := "no usage"
		if a.Usage != nil {
			u = fmt.Sprintf("in %v out %v cache %v/%v", deref(a.Usage.InputTokens), deref(a.Usage.OutputTokens),
				deref(a.Usage.CacheReadTokens), deref(a.Usage.CacheWriteTokens))
		}
		body := ""
		if len(a.RequestBody) > 0 {
			var b bytes.Buffer
			_ = json.Compact(&b, a.RequestBody)
			body = b.String()
		}
		sh.Attempts = append(sh.Attempts, fmt.Sprintf("%d.%d %s %s %s/%s model=%q id=%q body=%s", a.Turn, a.Attempt, a.Protocol, u,
			a.TerminalStatus, a.StopReason, a.ResponseModel, a.ResponseID, body))
	}
	texts := map[[2]int]*strings.Builder{}
	err := db.EachEntry(s.ID, 1, 0, func(e store.Entry) error {
		ev, ok, err := e.Canonical()
		if err != nil || !ok {
			return err
		}
		k := [2]int{e.Turn, e.Attempt}
		if texts[k] == nil {
			texts[k] = &strings.Builder{}
		}
		switch ev.Type {
		case adapters.EvTextDelta:
			texts[k].WriteString(ev.Delta)
		case adapters.EvToolProposed:
			fmt.Fprintf(texts[k], "[call %s %s %s]", ev.CallID, ev.Name, compact(ev.Arguments))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range s.Attempts {
		if b := texts[[2]int{a.Turn, a.Attempt}]; b != nil {
			sh.Texts = append(sh.Texts, fmt.Sprintf("%d.%d %s", a.Turn, a.Attempt, b.String()))
		}
	}
	for _, c := range s.Calls {
		sh.Calls = append(sh.Calls, fmt.Sprintf("turn %d %s %s args=%s decision=%s result=%v %q error=%v",
			c.Turn, c.CallID, c.Name, compact(c.Arguments), c.Decision, c.HasResult, c.Result, c.IsError))
	}
	return sh
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func compact(b []byte) string {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return string(b)
	}
	return out.String()
}

// TestRoundTrip exports a recorded session with `export --format otlp
// --otel-content`'s code to collect's endpoint and finds the same session:
// turns, attempts, usage, texts, tool calls and results, status.
func TestRoundTrip(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "mw.db")
	var out, errb bytes.Buffer
	if code := cli.Main([]string{"--db", dbPath, "run", "--approve", "auto"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errb.String())
	}
	src, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	orig := sessions(t, src)
	if len(orig) != 1 {
		t.Fatalf("want one recorded session, got %d", len(orig))
	}

	r := newRig(t, collect.Options{})
	if _, err := telemetry.Export(context.Background(), src, orig[0].ID, telemetry.Options{Endpoint: r.srv.URL, Content: true}); err != nil {
		t.Fatal(err)
	}
	r.close(t)
	got := sessions(t, r.db)
	if len(got) != 1 {
		t.Fatalf("want one collected session, got %d", len(got))
	}
	want, have := shapeOf(t, src, orig[0]), shapeOf(t, r.db, got[0])
	if len(want.Calls) == 0 || len(want.Texts) == 0 {
		t.Fatalf("the refund run has no calls or texts to compare: %+v", want)
	}
	if !reflect.DeepEqual(want, have) {
		t.Errorf("the collected session differs from the exported one:\nwant %s\ngot  %s", pretty(want), pretty(have))
	}
	// The six time points travel as span events (modelwire.first_response,
	// …, modelwire.terminal) and come back the same, to the microsecond.
	for i, a := range orig[0].Attempts {
		b := got[0].Attempts[i]
		if w, h := timePoints(a.Timings), timePoints(b.Timings); w != h {
			t.Errorf("attempt %d.%d's time points (headers, first event, first token, first text, terminal): got %s, want %s", a.Turn, a.Attempt, h, w)
		}
	}
	if got[0].Source != collect.Source || !got[0].CreatedAt.Equal(orig[0].CreatedAt.Truncate(time.Millisecond)) && got[0].CreatedAt.Sub(orig[0].CreatedAt).Abs() > time.Millisecond {
		t.Errorf("source %q created %v, want %q at %v", got[0].Source, got[0].CreatedAt, collect.Source, orig[0].CreatedAt)
	}
}

func pretty(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

func timePoints(tm store.Timings) string {
	var out []string
	for _, p := range []*time.Duration{tm.FirstByte, tm.FirstEvent, tm.FirstToken, tm.FirstText, tm.Terminal} {
		out = append(out, fmt.Sprint(deref((*int64)(p))))
	}
	return strings.Join(out, " ")
}
