package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/modelwire/modelwire/store"
)

// batchFixture is an imported batch's three requests (one failed) among
// two other sessions, created between them.
func batchFixture() []store.SessionInfo {
	t0 := time.Date(2026, 6, 1, 10, 0, 0, 0, time.Local)
	req := func(id, custom string, status store.Status, at time.Duration) store.SessionInfo {
		s := store.SessionInfo{ID: id, CreatedAt: t0.Add(at), FinishedAt: t0.Add(at), Status: status, Source: store.SourceBatch,
			Title: store.BatchTitle("batch_abc", "completed", custom), Protocol: "openai-responses", Provider: "openai", Model: "gpt-4.1-mini", Turns: 1}
		if status == store.StatusFailed {
			s.FailedLayer = "transport"
		}
		return s
	}
	return []store.SessionInfo{
		req("2aaaaaaaaaaa", "req-1", store.StatusDone, time.Minute),
		{ID: "1aaaaaaaaaaa", CreatedAt: t0.Add(2 * time.Minute), Status: "done", Scenario: "refund", Protocol: "openai-responses", Provider: "sim", Model: "refund-model", Turns: 3},
		req("2bbbbbbbbbbb", "bad-model", store.StatusFailed, 3*time.Minute),
		req("2ccccccccccc", "req-2", store.StatusDone, 4*time.Minute),
		{ID: "1bbbbbbbbbbb", CreatedAt: t0, Status: "failed", Scenario: "refund", Protocol: "anthropic-messages", Provider: "sim", Model: "refund-model", Turns: 3},
	}
}

// At 80×24 the batch is one group: its header with the batch's status
// (completed) and counts, its requests beneath with their own statuses
// (one failed: the batch stays completed), each named by its custom_id.
func TestSessionsGroupBatch(t *testing.T) {
	km := DefaultKeyMap()
	d := newSessionsDialog(newCommon("dark", true, false, nil), &km)
	d.setList(batchFixture(), nil)
	screen := d.View(80, 24)
	lines := strings.Split(screen, "\n")
	if len(lines) > 24 {
		t.Fatalf("%d lines at 80×24", len(lines))
	}
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > 80 {
			t.Errorf("line of %d cells at 80: %q", w, l)
		}
	}
	contains(t, screen, "Sessions (5)", "batch batch_abc · completed · 3 requests, 1 failed", "req-1", "req-2", "bad-model")
	// The rows in order: the header where the batch's newest request
	// sorts (newest first), its requests together beneath it.
	var order []string
	for _, s := range d.visible() {
		if isBatchRow(s) {
			order = append(order, "header")
		} else {
			order = append(order, s.ID[:2])
		}
	}
	if got := strings.Join(order, " "); got != "header 2c 2b 2a 1a 1b" {
		t.Fatalf("rows %s, want the batch's three requests beneath its header", got)
	}
	for _, l := range lines {
		if strings.Contains(l, "2bbbbbbbbbbb") && (!strings.Contains(l, "failed") || !strings.Contains(l, "bad-model")) {
			t.Errorf("the failed request's row does not say failed: %q", l)
		}
		if strings.Contains(l, "2ccccccccccc") && !strings.Contains(l, "done") {
			t.Errorf("a completed request's row does not say done: %q", l)
		}
	}

	// The header is not a session: enter, delete and export do nothing on
	// it; the next row down is a request that opens.
	if a, _ := d.HandleKey(key1("enter"), &km); a != nil {
		t.Fatalf("enter on the batch's header: %#v", a)
	}
	d.HandleKey(key1("down"), &km)
	if a, _ := d.HandleKey(key1("enter"), &km); a != (actOpenReplay{id: "2ccccccccccc"}) {
		t.Fatalf("enter on the first request: %#v", a)
	}

	// A search that finds one request keeps its header.
	d.filter.SetValue("bad-model")
	contains(t, d.View(80, 24), "batch batch_abc · completed · 1 requests, 1 failed", "2bbbbbbbbbbb")
}
