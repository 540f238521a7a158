package adapters_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/adapters/sse"
)

// An input is what a reducer is given: a batch of decoder events
// (Apply) or the end of the input (End, batch nil).
type input struct {
	end   bool
	batch []adapters.Event
}

func run(r *adapters.Reducer, in input) []adapters.Event {
	if in.end {
		return r.End()
	}
	return r.Apply(in.batch)
}

// captureInputs turns a capture into the reducer's inputs, one event per
// Apply, framed and decoded as adapters.ReadStream and Stream do.
func captureInputs(t *testing.T, p adapters.Protocol, body []byte) []input {
	t.Helper()
	var batches [][]adapters.Event
	dec := p.NewDecoder()
	seen := map[string]bool{}
	feed := func(raw adapters.RawEvent) {
		if raw.ID != "" {
			if seen[raw.ID] {
				batches = append(batches, []adapters.Event{adapters.Diag(adapters.DiagDuplicateEvent, fmt.Sprintf("event id %q seen before; dropped", raw.ID))})
				return
			}
			seen[raw.ID] = true
		}
		batches = append(batches, append([]adapters.Event(nil), dec.Decode(raw)...))
	}
	switch {
	case p.Framing() == adapters.FramingNDJSON:
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
				feed(adapters.RawEvent{Data: string(line)})
			}
		}
		batches = append(batches, dec.Finish())
	case !adapters.LooksLikeStream(body):
		batches = append(batches, p.DecodeBody(body))
	default:
		sr := sse.NewReader(bytes.NewReader(body))
		var endDiags []adapters.Event
		for {
			ev, err := sr.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					endDiags = append(endDiags, adapters.Diag(adapters.DiagReadError, err.Error()))
				}
				break
			}
			raw := adapters.RawEvent{Event: ev.Type, Data: ev.Data}
			if ev.HasID {
				raw.ID = ev.ID
			}
			feed(raw)
		}
		if sr.Stats().InvalidUTF8 {
			endDiags = append(endDiags, adapters.Diag(adapters.DiagInvalidUTF8, "ill-formed UTF-8 was replaced by U+FFFD"))
		}
		batches = append(batches, append(endDiags, dec.Finish()...))
	}
	var out []input
	for _, b := range batches {
		for _, ev := range b {
			out = append(out, input{batch: []adapters.Event{ev}})
		}
	}
	return append(out, input{end: true})
}

// captures lists every capture of the adapters' testdata with its
// protocol.
func captures(t *testing.T) map[string]adapters.Protocol {
	t.Helper()
	dirs := map[string]string{
		"anthropic": adapters.AnthropicMessages, "claudecode": adapters.ClaudeCode, "gemini": adapters.Gemini,
		"openaichat": adapters.OpenAIChat, "openairesponses": adapters.OpenAIResponses,
	}
	out := map[string]adapters.Protocol{}
	for dir, proto := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "testdata", "*"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			base := filepath.Base(f)
			if strings.Contains(base, "golden") || !(strings.HasSuffix(base, ".sse") || strings.HasSuffix(base, ".ndjson") || strings.HasSuffix(base, ".json")) {
				continue
			}
			name := proto
			if strings.HasPrefix(base, "deepseek_") {
				name = adapters.DeepSeekChat
			}
			p, err := registry.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			out[f] = p
		}
	}
	if len(out) < 50 {
		t.Fatalf("only %d captures found", len(out))
	}
	return out
}

// view is everything a reducer shows, in JSON so that raw JSON values
// compare by content.
func view(t *testing.T, r *adapters.Reducer) string {
	t.Helper()
	var items []adapters.Item
	for _, it := range r.Items() {
		items = append(items, *it)
	}
	b, err := json.Marshal(struct {
		Seq      int
		Done     bool
		Terminal *adapters.Event
		Usage    *adapters.Usage
		Items    []adapters.Item
		Summary  adapters.Summary
		Turn     adapters.Turn
	}{r.Seq(), r.Done(), r.Terminal(), r.Usage(), items, r.Summary(), r.Turn()})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func restore(t *testing.T, s adapters.ReducerSnapshot) *adapters.Reducer {
	t.Helper()
	r, err := adapters.RestoreReducer(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// checkRestoreAt feeds ins[:k] to a reducer, snapshots it, and checks that
// the restored reducer (from the snapshot as is, and from its JSON form)
// then does exactly what the original does with ins[k:].
func checkRestoreAt(t *testing.T, name, protocol string, ins []input, k int) {
	t.Helper()
	orig := adapters.NewReducer(protocol)
	for _, in := range ins[:k] {
		run(orig, in)
	}
	snap := orig.Snapshot()
	var fromJSON adapters.ReducerSnapshot
	if err := json.Unmarshal([]byte(jsonOf(t, snap)), &fromJSON); err != nil {
		t.Fatal(err)
	}
	direct := restore(t, snap)
	viaJSON := restore(t, fromJSON)
	if !reflect.DeepEqual(direct.Snapshot(), snap) {
		t.Fatalf("%s at %d: the restored reducer's snapshot differs\n got %+v\nwant %+v", name, k, direct.Snapshot(), snap)
	}
	want := view(t, orig)
	for how, r := range map[string]*adapters.Reducer{"snapshot": direct, "json": viaJSON} {
		if got := view(t, r); got != want {
			t.Fatalf("%s at %d (%s): state after restore\n got %s\nwant %s", name, k, how, got, want)
		}
	}
	for i, in := range ins[k:] {
		w := jsonOf(t, run(orig, in))
		for how, r := range map[string]*adapters.Reducer{"snapshot": direct, "json": viaJSON} {
			if got := jsonOf(t, run(r, in)); got != w {
				t.Fatalf("%s at %d (%s): input %d after the snapshot emits\n got %s\nwant %s", name, k, how, k+i, got, w)
			}
		}
	}
	want = view(t, orig)
	for how, r := range map[string]*adapters.Reducer{"snapshot": direct, "json": viaJSON} {
		if got := view(t, r); got != want {
			t.Fatalf("%s at %d (%s): final state\n got %s\nwant %s", name, k, how, got, want)
		}
	}
	// The snapshot is not disturbed by what the original did later.
	if !reflect.DeepEqual(restore(t, snap).Snapshot(), snap) {
		t.Fatalf("%s at %d: the snapshot changed after it was taken", name, k)
	}
}

// checkSince takes snapshots every stride inputs with SnapshotSince and
// checks that applying each to what the ones before gave (items and texts
// joined, diagnostics appended) gives the whole snapshot, and that what it
// leaves out did not change.
func checkSince(t *testing.T, name, protocol string, ins []input, stride int) {
	t.Helper()
	r := adapters.NewReducer(protocol)
	kept := adapters.ReducerSnapshot{Items: []adapters.ItemSnapshot{}} // the whole state, rebuilt from the parts
	since := 0
	step := func(k int) {
		full := r.Snapshot()
		part := r.SnapshotSince(since, lens(kept.Items))
		at := fmt.Sprintf("%s stride %d at %d", name, stride, k)
		last := -1
		for _, it := range part.Items {
			if it.Index <= last || it.Index > len(kept.Items) {
				t.Fatalf("%s: item %d after item %d of %d", at, it.Index, last, len(kept.Items))
			}
			last = it.Index
			if it.Index == len(kept.Items) {
				if it.TextFrom != 0 {
					t.Fatalf("%s: new item %d from %d", at, it.Index, it.TextFrom)
				}
				kept.Items = append(kept.Items, it)
				continue
			}
			old := kept.Items[it.Index].Text
			if it.TextFrom > len(old) {
				t.Fatalf("%s: item %d from %d of %d bytes", at, it.Index, it.TextFrom, len(old))
			}
			it.Text = old[:it.TextFrom] + it.Text
			it.TextFrom = 0
			kept.Items[it.Index] = it
		}
		kept.Diagnostics = append(kept.Diagnostics, part.Diagnostics...)
		kept.Protocol, kept.Seq, kept.ResponseID, kept.Model, kept.Usage, kept.Terminal = part.Protocol, part.Seq, part.ResponseID, part.Model, part.Usage, part.Terminal
		if got, want := jsonOf(t, kept), jsonOf(t, full); got != want {
			t.Fatalf("%s: the parts make\n%s\nwant\n%s", at, got, want)
		}
		since = r.Seq()
	}
	for k, in := range ins {
		run(r, in)
		if (k+1)%stride == 0 || k == len(ins)-1 {
			step(k + 1)
		}
	}
}

func lens(items []adapters.ItemSnapshot) []int {
	out := make([]int, len(items))
	for i, it := range items {
		out[i] = len(it.Text)
	}
	return out
}

// TestSnapshotRestoreCaptures is the property over every capture of the
// adapters' testdata: snapshot at every position, restore, feed the rest.
func TestSnapshotRestoreCaptures(t *testing.T) {
	for path, p := range captures(t) {
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ins := captureInputs(t, p, body)
		for k := 0; k <= len(ins); k++ {
			checkRestoreAt(t, path, p.Name(), ins, k)
		}
		for _, stride := range []int{1, 2, 3, 7} {
			checkSince(t, path, p.Name(), ins, stride)
		}
	}
}

// randomInputs makes an event sequence that exercises every rule of the
// reducer: items of every kind, deltas, closes with equal and different
// final texts (and with nothing received before), unknown items,
// duplicates, usage, diagnostics, a terminal and events after it.
func randomInputs(rng *rand.Rand, n int) []input {
	ids := []string{"a", "b", "c", "d"}
	kinds := []adapters.ItemKind{adapters.KindMessage, adapters.KindReasoning, adapters.KindToolCall, adapters.KindRefusal}
	texts := map[string]string{}
	deltaType := map[adapters.ItemKind]adapters.EventType{adapters.KindMessage: adapters.EvTextDelta, adapters.KindReasoning: adapters.EvReasoningDelta,
		adapters.KindToolCall: adapters.EvToolArgsDelta, adapters.KindRefusal: adapters.EvRefusalDelta}
	kindOf := map[string]adapters.ItemKind{}
	pieces := []string{`{"x":`, `1}`, "é", "你好", " ", "", `"`, "<&>"}
	var out []input
	for range n {
		id := ids[rng.IntN(len(ids))]
		var ev adapters.Event
		switch rng.IntN(12) {
		case 0, 1:
			k := kinds[rng.IntN(len(kinds))]
			kindOf[id] = k
			ev = adapters.Event{Type: adapters.EvItemStarted, ItemID: id, Kind: string(k), CallID: "call_" + id, Name: "f_" + id}
		case 2, 3, 4, 5:
			k, ok := kindOf[id]
			if !ok {
				k = kinds[rng.IntN(len(kinds))]
			}
			d := pieces[rng.IntN(len(pieces))]
			texts[id] += d
			ev = adapters.Event{Type: deltaType[k], ItemID: id, Delta: d}
		case 6:
			ev = adapters.Event{Type: adapters.EvItemDone, ItemID: id, Signature: fmt.Sprintf("sig%d", rng.IntN(3))}
			switch rng.IntN(3) {
			case 0:
				f := texts[id]
				ev.Final = &f
			case 1:
				f := `{"y":2}`
				ev.Final = &f
			}
		case 7:
			ev = adapters.Event{Type: adapters.EvUsage, Usage: &adapters.Usage{InputTokens: adapters.Int(rng.Int64N(100)), ProviderUsage: json.RawMessage(`{"in": 1}`)}}
		case 8:
			ev = adapters.Diag(adapters.DiagMalformedEvent, "bad")
		case 9:
			ev = adapters.Event{Type: adapters.EvResponseStarted, ResponseID: fmt.Sprintf("resp_%d", rng.IntN(3)), Model: "m"}
		case 10:
			if rng.IntN(6) == 0 {
				ev = adapters.Terminal(adapters.StatusCompleted, adapters.StopFinal, "stop")
				ev.Error = &adapters.APIError{Type: "x", Message: "y"}
			} else {
				ev = adapters.Event{Type: adapters.EvUnknown, RawType: "ping"}
			}
		case 11:
			out = append(out, input{batch: []adapters.Event{
				{Type: adapters.EvTextDelta, ItemID: id, Delta: "x"},
				{Type: adapters.EvItemDone, ItemID: id},
			}})
			continue
		}
		out = append(out, input{batch: []adapters.Event{ev}})
	}
	return append(out, input{end: true})
}

func TestSnapshotRestoreRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 14))
	for i := range 80 {
		ins := randomInputs(rng, 10+rng.IntN(40))
		name := fmt.Sprintf("random %d", i)
		for k := 0; k <= len(ins); k++ {
			checkRestoreAt(t, name, "test", ins, k)
		}
		for _, stride := range []int{1, 2, 5} {
			checkSince(t, name, "test", ins, stride)
		}
	}
}

// A replaced text is whole in the next SnapshotSince; a text that only
// grew is its new bytes.
func TestSnapshotSinceReplacedText(t *testing.T) {
	r := adapters.NewReducer("test")
	r.Apply([]adapters.Event{
		{Type: adapters.EvItemStarted, ItemID: "m", Kind: string(adapters.KindMessage)},
		{Type: adapters.EvTextDelta, ItemID: "m", Delta: "hello wor"},
		{Type: adapters.EvItemStarted, ItemID: "n", Kind: string(adapters.KindMessage)},
		{Type: adapters.EvTextDelta, ItemID: "n", Delta: "abc"},
	})
	first := r.SnapshotSince(0, nil)
	if first.Items[0].Text != "hello wor" || first.Items[0].TextFrom != 0 {
		t.Fatalf("first %+v", first.Items)
	}
	final, same := "HELLO", "abcd"
	r.Apply([]adapters.Event{
		{Type: adapters.EvTextDelta, ItemID: "m", Delta: "ld"},
		{Type: adapters.EvItemDone, ItemID: "m", Final: &final},
		{Type: adapters.EvTextDelta, ItemID: "n", Delta: "d"},
		{Type: adapters.EvItemDone, ItemID: "n", Final: &same},
	})
	next := r.SnapshotSince(first.Seq, []int{9, 3})
	if it := next.Items[0]; it.Text != "HELLO" || it.TextFrom != 0 {
		t.Errorf("replaced item: %q from %d", it.Text, it.TextFrom)
	}
	if it := next.Items[1]; it.Text != "d" || it.TextFrom != 3 {
		t.Errorf("grown item: %q from %d", it.Text, it.TextFrom)
	}
}

func TestRestoreReducerRejects(t *testing.T) {
	r := adapters.NewReducer("test")
	r.Apply([]adapters.Event{{Type: adapters.EvItemStarted, ItemID: "m", Kind: string(adapters.KindMessage)}, {Type: adapters.EvTextDelta, ItemID: "m", Delta: "hi"}})
	s := r.Snapshot()
	part := r.SnapshotSince(r.Seq(), []int{1})
	if _, err := adapters.RestoreReducer(part); err == nil {
		t.Error("a snapshot with part of a text was restored")
	}
	gap := r.Snapshot()
	gap.Items[0].Index = 1
	if _, err := adapters.RestoreReducer(gap); err == nil {
		t.Error("a snapshot with an item out of place was restored")
	}
	dup := s
	dup.Items = append(dup.Items, dup.Items[0])
	dup.Items[1].Index = 1
	if _, err := adapters.RestoreReducer(dup); err == nil {
		t.Error("a snapshot with an item twice was restored")
	}
	// A parsed call's arguments may be left out.
	r.Apply([]adapters.Event{{Type: adapters.EvItemStarted, ItemID: "c", Kind: string(adapters.KindToolCall), CallID: "k", Name: "f"},
		{Type: adapters.EvToolArgsDelta, ItemID: "c", Delta: `{ "a" : 1 }`}, {Type: adapters.EvItemDone, ItemID: "c"}})
	s = r.Snapshot()
	s.Items[1].Arguments = nil
	back, err := adapters.RestoreReducer(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Summary().ToolCalls; len(got) != 1 || string(got[0].Arguments) != `{"a":1}` {
		t.Errorf("tool calls %+v", got)
	}
}
