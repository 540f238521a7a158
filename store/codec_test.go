package store

import (
	"encoding/binary"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
)

// TestPlainEventsMatchEncodingJSON: the hand-written encoder of stored
// events writes what encoding/json wrote before it, byte for byte, for
// the events it takes, strings of every kind included; the others it
// leaves to encoding/json.
func TestPlainEventsMatchEncodingJSON(t *testing.T) {
	final := "全文 <b>&</b>\u2028"
	odd := []string{"", "plain", "退款 refund 🙂", "quote \" back \\ slash", "ctl \b\f\n\r\t\x00\x1f\x7f",
		"<html> & </html>", "bad \xff\xfe utf-8 \xe2\x80", "sep \u2028 \u2029", "\u00e9\u0301"}
	var evs []adapters.Event
	for i, s := range odd {
		evs = append(evs,
			adapters.Event{Seq: i, Type: adapters.EvTextDelta, ItemID: "msg_" + s, Delta: s},
			adapters.Event{Seq: -i, Type: adapters.EventType(s), ResponseID: s, Model: s, Kind: s, CallID: s, Name: s,
				Signature: s, Status: adapters.Status(s), StopReason: adapters.StopReason(s), ProviderStopReason: s, RawType: s, Detail: s},
			adapters.Event{Seq: 1 << 40, Type: adapters.EvItemDone, ItemID: s, Final: &final},
			adapters.Terminal(adapters.StatusCompleted, adapters.StopFinal, s))
	}
	check := func(evs []adapters.Event, plain bool) {
		t.Helper()
		got, ok := appendPlainEvents(nil, evs)
		if ok != plain {
			t.Fatalf("%+v: plain %v, want %v", evs, ok, plain)
		}
		if !ok {
			return
		}
		e := encoders.Get().(*eventEncoder)
		defer encoders.Put(e)
		e.buf.Reset()
		if err := e.enc.Encode(evs); err != nil {
			t.Fatal(err)
		}
		if want := strings.TrimSuffix(e.buf.String(), "\n"); string(got) != want {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	}
	for i := range evs {
		check(evs[i:i+1], true)
	}
	check(evs, true)
	for _, ev := range []adapters.Event{
		{Seq: 3, Type: adapters.EvToolProposed, CallID: "call_1", Arguments: json.RawMessage(`{"order_id": 7}`)},
		{Seq: 4, Type: adapters.EvUsage, Usage: &adapters.Usage{InputTokens: adapters.Int(3)}},
		{Seq: 5, Type: adapters.EvTerminal, Error: &adapters.APIError{Message: "overloaded"}},
	} {
		check([]adapters.Event{evs[0], ev}, false)
		enc, err := encodeEvents([]adapters.Event{ev})
		if err != nil {
			t.Fatal(err)
		}
		var back []adapters.Event
		if err := json.Unmarshal(enc, &back); err != nil || len(back) != 1 || back[0].Seq != ev.Seq || back[0].Type != ev.Type {
			t.Fatalf("%s decodes to %+v, %v", enc, back, err)
		}
	}
}

// TestPlainEventsEveryField: every field of adapters.Event set at once
// encodes as encoding/json does, so that a field added to Event and not
// to appendPlainEvents fails here rather than going missing from the
// store.
func TestPlainEventsEveryField(t *testing.T) {
	var ev adapters.Event
	v := reflect.ValueOf(&ev).Elem()
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		switch {
		case name == "Arguments" || name == "Usage" || name == "Error":
			// not plain: encodeEvents gives them to encoding/json
		case f.Kind() == reflect.String:
			f.SetString("v_" + name)
		case f.Kind() == reflect.Int:
			f.SetInt(int64(i + 1))
		case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.String:
			s := "p_" + name
			f.Set(reflect.ValueOf(&s))
		default:
			t.Fatalf("adapters.Event.%s (%s): teach appendPlainEvents and plainEvents about it", name, f.Type())
		}
	}
	got, ok := appendPlainEvents(nil, []adapters.Event{ev})
	want, err := json.Marshal([]adapters.Event{ev})
	if !ok || err != nil || string(got) != string(want) {
		t.Fatalf("ok %v, err %v\n got  %s\nwant %s", ok, err, got, want)
	}
}

// TestUncompressedChunksReadBack: chunks written before migration 0004
// (uncompressed) read back the same entries, raw events included, from a
// file opened read-only as it is and once migrated; new chunks are
// compressed; the content search finds text in both kinds.
func TestUncompressedChunksReadBack(t *testing.T) {
	db, path := openTemp(t)
	record := func(db *DB, item string) string {
		w, err := db.CreateSession(refundMeta())
		if err != nil {
			t.Fatal(err)
		}
		for turn := 1; turn <= 2; turn++ {
			rec, err := w.StartAttempt(turn, AttemptMeta{Method: "POST", URL: "https://api.openai.com/v1/responses", Stream: true})
			if err != nil {
				t.Fatal(err)
			}
			appendResponse(t, rec, 700, item) // more than a chunk's 256 steps
		}
		if err := w.RecordToolResult(ToolResult{Turn: 2, CallID: "call_" + item, Content: "ok"}); err != nil {
			t.Fatal(err)
		}
		if err := w.Finish(StatusDone); err != nil {
			t.Fatal(err)
		}
		return w.ID()
	}
	entries := func(db *DB, id string) []Entry {
		t.Helper()
		es, err := db.Events(id, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		return es
	}
	found := func(db *DB, text string) []string {
		t.Helper()
		ss, err := db.ListSessions(Filter{Content: text})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, s := range ss {
			ids = append(ids, s.ID)
		}
		return ids
	}
	codecs := func(db *DB, id string) map[int]int {
		t.Helper()
		rows, err := db.sql.Query(`SELECT codec, count(*) FROM chunks WHERE sid = (SELECT sid FROM sessions WHERE id = ?) GROUP BY codec`, id)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[int]int{}
		for rows.Next() {
			var c, n int
			rows.Scan(&c, &n)
			out[c] = n
		}
		return out
	}

	oldID := record(db, "msg_alpha_old")
	want := entries(db, oldID)
	if c := codecs(db, oldID); len(c) != 1 || c[codecS2] < 6 {
		t.Fatalf("chunks written now by codec: %v, want all S2", c)
	}
	if got := found(db, "alpha_old"); !reflect.DeepEqual(got, []string{oldID}) {
		t.Fatalf("content search in compressed chunks: %v, want %s", got, oldID)
	}
	db.Close()
	old := schema1(t, path) // what modelwire wrote before 0004: uncompressed

	ro, err := OpenWith(old, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := entries(ro, oldID); !reflect.DeepEqual(got, want) {
		t.Fatalf("read-only schema 1: %d entries differ from the %d written", len(got), len(want))
	}
	if got := found(ro, "alpha_old"); !reflect.DeepEqual(got, []string{oldID}) {
		t.Fatalf("content search, read-only schema 1: %v, want %s", got, oldID)
	}
	ro.Close()

	mdb, err := Open(old)
	if err != nil {
		t.Fatal(err)
	}
	defer mdb.Close()
	if got := entries(mdb, oldID); !reflect.DeepEqual(got, want) {
		t.Fatalf("migrated: %d entries differ from the %d written", len(got), len(want))
	}
	if c := codecs(mdb, oldID); len(c) != 1 || c[codecPlain] < 6 {
		t.Fatalf("migrated chunks by codec: %v, want all plain", c)
	}
	newID := record(mdb, "msg_beta_new")
	if c := codecs(mdb, newID); len(c) != 1 || c[codecS2] < 6 {
		t.Fatalf("chunks added after migration by codec: %v, want all S2", c)
	}
	if got := found(mdb, "alpha_old"); !reflect.DeepEqual(got, []string{oldID}) {
		t.Fatalf("content search, plain chunks: %v, want %s", got, oldID)
	}
	if got := found(mdb, "beta_new"); !reflect.DeepEqual(got, []string{newID}) {
		t.Fatalf("content search, compressed chunks: %v, want %s", got, newID)
	}
	if got, want := len(entries(mdb, newID)), len(want); got != want {
		t.Fatalf("the new session has %d entries, want %d", got, want)
	}
}

// TestDecodePlainEvent reads what appendPlainEvents writes as
// json.Unmarshal does, and refuses (leaves to json.Unmarshal) anything it
// cannot read exactly: escapes, other fields, other forms.
func TestDecodePlainEvent(t *testing.T) {
	final := "全文 <b>&</b>"
	var evs []adapters.Event
	for i, s := range []string{"", "plain", "退款 refund 🙂", "quote \" back \\ slash", "ctl \n\x00", "bad \xff utf-8", "a:b,c}{"} {
		evs = append(evs,
			adapters.Event{Seq: i, Type: adapters.EvTextDelta, ItemID: "msg_" + s, Delta: s},
			adapters.Event{Seq: 1000 + i, Type: adapters.EventType(s), ResponseID: s, Model: s, Kind: s, CallID: s, Name: s,
				Signature: s, Status: adapters.Status(s), StopReason: adapters.StopReason(s), ProviderStopReason: s, RawType: s, Detail: s},
			adapters.Event{Seq: 1 << 40, Type: adapters.EvItemDone, ItemID: s, Final: &final},
			adapters.Event{Seq: -i, Type: adapters.EvTextDelta, Delta: s},
			adapters.Terminal(adapters.StatusCompleted, adapters.StopFinal, s),
			adapters.Event{Seq: 3, Type: adapters.EvToolProposed, CallID: s, Arguments: json.RawMessage(`{"order_id": 7}`)},
			adapters.Event{Seq: 4, Type: adapters.EvUsage, Usage: &adapters.Usage{InputTokens: adapters.Int(3)}})
	}
	fast := 0
	for _, ev := range evs {
		arr, err := encodeEvents([]adapters.Event{ev})
		if err != nil {
			t.Fatal(err)
		}
		raw := arr[1 : len(arr)-1]
		var want adapters.Event
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		got, ok := decodePlainEvent(raw)
		if !ok {
			continue
		}
		fast++
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\ngot  %+v\nwant %+v", raw, got, want)
		}
	}
	if fast < len(evs)/3 {
		t.Errorf("only %d of %d events read without the JSON decoder", fast, len(evs))
	}
	for _, raw := range []string{`{"seq":1,"type":"x","delta":"a"} `, `{"seq":1,"type":"x","zzz":"a"}`, `{"type":"x","seq":1}`,
		`{"seq":1,"type":"x","delta":"a","item_id":"b"}`, `{"seq":1,"type":"x"`} {
		if ev, ok := decodePlainEvent([]byte(raw)); ok {
			t.Errorf("%s read as %+v", raw, ev)
		}
	}
}

// A row whose S2 header claims more than any chunk holds is refused as
// damaged before anything is allocated for it.
func TestChunkClaimingTooMuchIsDamaged(t *testing.T) {
	// An S2 block starts with its decoded length as a uvarint.
	claim := binary.AppendUvarint(nil, 4<<30)
	if _, err := decodeChunkColumn(append(claim, 0, 0, 0), codecS2); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("a 4 GiB claim: %v", err)
	}
	b := compressChunk(nil, []byte("a step"))
	if out, err := decodeChunkColumn(b, codecS2); err != nil || string(out) != "a step" {
		t.Fatalf("a real chunk: %q %v", out, err)
	}
}
