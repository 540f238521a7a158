package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf8"
)

// decode reads every event of r; err is the error that ended it (io.EOF at
// a clean end).
func decode(r io.Reader, max int) ([]Event, Stats, error) {
	sr := NewReader(r)
	if max > 0 {
		sr.SetMaxEventSize(max)
	}
	var evs []Event
	for {
		ev, err := sr.Next()
		if err != nil {
			return evs, sr.Stats(), err
		}
		evs = append(evs, ev)
	}
}

func mustDecode(t *testing.T, stream string) ([]Event, Stats) {
	t.Helper()
	evs, st, err := decode(strings.NewReader(stream), 0)
	if err != io.EOF {
		t.Fatalf("decode(%q): err = %v, want io.EOF", stream, err)
	}
	return evs, st
}

// short is the comparable part of an event without offsets.
type short struct{ Type, Data, ID string }

func shorts(evs []Event) []short {
	out := []short{}
	for _, e := range evs {
		out = append(out, short{e.Type, e.Data, e.ID})
	}
	return out
}

func TestLineEnds(t *testing.T) {
	want := []short{{"a", "1\n2", ""}, {"", "3", ""}}
	for name, stream := range map[string]string{
		"LF":    "event: a\ndata: 1\ndata: 2\n\ndata: 3\n\n",
		"CRLF":  "event: a\r\ndata: 1\r\ndata: 2\r\n\r\ndata: 3\r\n\r\n",
		"CR":    "event: a\rdata: 1\rdata: 2\r\rdata: 3\r\r",
		"mixed": "event: a\r\ndata: 1\rdata: 2\n\r\ndata: 3\n\r",
	} {
		t.Run(name, func(t *testing.T) {
			evs, st := mustDecode(t, stream)
			if got := shorts(evs); !reflect.DeepEqual(got, want) {
				t.Errorf("events = %q, want %q", got, want)
			}
			if wantCR := name == "CR" || name == "mixed"; st.BareCR != wantCR {
				t.Errorf("BareCR = %v, want %v", st.BareCR, wantCR)
			}
		})
	}
}

func TestCRLFIsOneLineEnd(t *testing.T) {
	// If CR and LF were two line ends, the blank line after "data: a" would
	// dispatch early and "data: b" would be a separate event.
	evs, _ := mustDecode(t, "data: a\r\ndata: b\r\n\r\n")
	if len(evs) != 1 || evs[0].Data != "a\nb" {
		t.Fatalf("events = %q, want one with data \"a\\nb\"", shorts(evs))
	}
	// LF CR is two line ends: a blank line follows "data: a".
	evs, _ = mustDecode(t, "data: a\n\rdata: b\n\n")
	if got := shorts(evs); len(got) != 2 {
		t.Fatalf("events = %q, want two", got)
	}
}

func TestBOM(t *testing.T) {
	evs, st := mustDecode(t, "\xEF\xBB\xBFevent: a\ndata: 1\n\n")
	if len(evs) != 1 || evs[0].Type != "a" || !st.BOMStripped {
		t.Fatalf("events = %q, BOMStripped = %v; want type a, stripped", shorts(evs), st.BOMStripped)
	}
	if evs[0].Offset != 3 || evs[0].End != 21 {
		t.Errorf("offsets = %d..%d, want 3..21", evs[0].Offset, evs[0].End)
	}
	// Only one BOM is stripped: the second makes the field name "\uFEFFevent".
	evs, st = mustDecode(t, "\xEF\xBB\xBF\xEF\xBB\xBFevent: a\ndata: 1\n\n")
	if len(evs) != 1 || evs[0].Type != "" || st.IgnoredFields != 1 {
		t.Fatalf("second BOM: events = %q, ignored = %d; want type \"\", 1 ignored", shorts(evs), st.IgnoredFields)
	}
	// A BOM in a value is data.
	evs, _ = mustDecode(t, "data: \xEF\xBB\xBFx\n\n")
	if len(evs) != 1 || evs[0].Data != "\uFEFFx" {
		t.Fatalf("BOM in data: %q", shorts(evs))
	}
	// Not a BOM: a prefix of one, then other bytes.
	evs, st = mustDecode(t, "\xEF\xBBdata: 1\n\ndata: 2\n\n")
	if st.BOMStripped || len(evs) != 1 || evs[0].Data != "2" {
		t.Fatalf("partial BOM: events = %q, stripped = %v", shorts(evs), st.BOMStripped)
	}
	// Stream shorter than a BOM.
	if evs, st := mustDecode(t, "\xEF\xBB"); len(evs) != 0 || st.DiscardedTail != 2 || st.BOMStripped {
		t.Fatalf("short stream: %v %+v", evs, st)
	}
	if evs, st := mustDecode(t, "\xEF\xBB\xBF"); len(evs) != 0 || st.DiscardedTail != 0 || !st.BOMStripped {
		t.Fatalf("BOM only: %v %+v", evs, st)
	}
}

func TestComments(t *testing.T) {
	evs, st := mustDecode(t, ": keep-alive\n\n:\ndata: 1\n: inside\ndata: 2\n\n: ping\r\n\r\n")
	if got := shorts(evs); !reflect.DeepEqual(got, []short{{"", "1\n2", ""}}) {
		t.Fatalf("events = %q", got)
	}
	if st.Comments != 4 {
		t.Errorf("Comments = %d, want 4", st.Comments)
	}
}

func TestDataValues(t *testing.T) {
	for _, tc := range []struct{ stream, want string }{
		{"data\n\n", ""},               // no colon: empty value, still data
		{"data\ndata\n\n", "\n"},       // two empty lines
		{"data:\n\n", ""},              // empty value dispatches ""
		{"data: \n\n", ""},             // one space removed
		{"data:  x\n\n", " x"},         // only one space removed
		{"data:x\n\n", "x"},            // no space
		{"data:\tx\n\n", "\tx"},        // tab is not removed
		{"data: a:b: c\n\n", "a:b: c"}, // split at the first colon
		{"data: [DONE]\n\n", "[DONE]"},
		{"data: x \n\n", "x "}, // trailing space kept
		{"data: 1\ndata:\ndata: 3\n\n", "1\n\n3"},
		{"data: 1\ndata\n\n", "1\n"}, // one trailing LF removed, not all
	} {
		evs, _ := mustDecode(t, tc.stream)
		if len(evs) != 1 || evs[0].Data != tc.want {
			t.Errorf("%q: events = %q, want one with data %q", tc.stream, shorts(evs), tc.want)
		}
	}
}

func TestEventOnlyBlock(t *testing.T) {
	// The type of a block without data must not leak into the next block.
	evs, _ := mustDecode(t, "event: ping\n\ndata: 1\n\nevent: a\nevent: b\ndata: 2\n\nevent:\ndata: 3\n\n")
	want := []short{{"", "1", ""}, {"b", "2", ""}, {"", "3", ""}}
	if got := shorts(evs); !reflect.DeepEqual(got, want) {
		t.Fatalf("events = %q, want %q", got, want)
	}
	// Blank lines alone dispatch nothing.
	if evs, _ := mustDecode(t, "\n\n\r\n\r\r"); len(evs) != 0 {
		t.Fatalf("blank lines dispatched %q", shorts(evs))
	}
}

func TestID(t *testing.T) {
	evs, st := mustDecode(t, ""+
		"data: 1\n\n"+ // no id yet
		"id: 7\ndata: 2\n\n"+
		"data: 3\n\n"+ // sticky
		"id: 8\n\n"+ // no data: id still set
		"data: 4\n\n"+
		"id: bad\x00\ndata: 5\n\n"+ // NUL: ignored, id stays 8
		"id\ndata: 6\n\n"+ // empty id resets
		"id: é\ndata: 7\n\n")
	type idv struct {
		ID    string
		HasID bool
	}
	var got []idv
	for _, e := range evs {
		got = append(got, idv{e.ID, e.HasID})
	}
	want := []idv{{"", false}, {"7", true}, {"7", false}, {"8", false}, {"8", false}, {"", true}, {"é", true}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ids = %v, want %v", got, want)
	}
	if st.IgnoredFields != 1 {
		t.Errorf("IgnoredFields = %d, want 1 (the NUL id)", st.IgnoredFields)
	}
}

func TestRetry(t *testing.T) {
	sr := NewReader(strings.NewReader("" +
		"retry: 1500\ndata: a\n\n" +
		"data: b\n\n" + // retry is per block in Event
		"retry: 15x\ndata: c\n\n" +
		"retry:\ndata: d\n\n" +
		"retry: -1\nretry: 1 \nretry: +2\nretry: ３\ndata: e\n\n" +
		"retry: 0042\n\n" + // no data: only the reconnection time changes
		"retry: 99999999999999999999999\ndata: f\n\n"))
	var got []int
	for ev, err := range sr.All() {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Retry)
	}
	big := int(^uint(0) >> 1)
	if want := []int{1500, 0, 0, 0, 0, big}; !reflect.DeepEqual(got, want) {
		t.Fatalf("retries = %v, want %v", got, want)
	}
	if st := sr.Stats(); st.IgnoredFields != 6 {
		t.Errorf("IgnoredFields = %d, want 6", st.IgnoredFields)
	}

	sr = NewReader(strings.NewReader("retry: 0042\n\nretry: x\n\n"))
	if _, err := sr.Next(); err != io.EOF {
		t.Fatal(err)
	}
	if ms, ok := sr.ReconnectionTime(); ms != 42 || !ok {
		t.Errorf("ReconnectionTime = %d, %v; want 42, true", ms, ok)
	}
}

func TestUnknownFields(t *testing.T) {
	evs, st := mustDecode(t, "foo: bar\nData: x\ndata : y\nDATA\nevent : z\ndata: 1\n\n")
	if got := shorts(evs); !reflect.DeepEqual(got, []short{{"", "1", ""}}) {
		t.Fatalf("events = %q", got)
	}
	if st.IgnoredFields != 5 {
		t.Errorf("IgnoredFields = %d, want 5", st.IgnoredFields)
	}
}

func TestUnterminatedTail(t *testing.T) {
	for _, tc := range []struct {
		stream string
		tail   int64
	}{
		{"data: a\n\ndata: [DONE]\n", 13},
		{"data: a\n\ndata: [DONE]", 12},
		{"data: a\n\nevent: x\r\n", 10},
		{"data: a\n\n: c\n", 4},
		{"data: a\r\n\r\n", 0},
		{"data: a\n\n\n\n", 0},
	} {
		sr := NewReader(strings.NewReader(tc.stream))
		n := 0
		for _, err := range sr.All() {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != 1 {
			t.Errorf("%q: %d events, want 1", tc.stream, n)
		}
		if st := sr.Stats(); st.DiscardedTail != tc.tail {
			t.Errorf("%q: DiscardedTail = %d, want %d", tc.stream, st.DiscardedTail, tc.tail)
		}
		if sr.Pending() != (tc.tail > 0) {
			t.Errorf("%q: Pending = %v after EOF", tc.stream, sr.Pending())
		}
		if _, err := sr.Next(); err != io.EOF {
			t.Errorf("%q: Next after EOF = %v", tc.stream, err)
		}
	}
}

func TestInvalidUTF8(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"\xFF\xFE", "\uFFFD\uFFFD"},                     // one per invalid byte
		{"\xE2\x82x", "\uFFFDx"},                         // one per maximal subpart
		{"\xE2\x82\xAC", "€"},                            // valid
		{"\xED\xA0\x80", "\uFFFD\uFFFD\uFFFD"},           // surrogate: ED then A0, 80 each
		{"\xF0\x9F\x98", "\uFFFD"},                       // truncated 4-byte
		{"\xF0\x80\x80\x80", "\uFFFD\uFFFD\uFFFD\uFFFD"}, // overlong
		{"\xF4\x90\x80\x80", "\uFFFD\uFFFD\uFFFD\uFFFD"}, // > U+10FFFF
		{"a\xC3", "a\uFFFD"},
	} {
		evs, st := mustDecode(t, "event: t\xC3\ndata: "+tc.in+"\ndata: \xE9\x80\n\n")
		if len(evs) != 1 || evs[0].Data != tc.want+"\n\uFFFD" || evs[0].Type != "t\uFFFD" {
			t.Errorf("%q: events = %+q, want data %+q", tc.in, shorts(evs), tc.want+"\n\uFFFD")
		}
		if !st.InvalidUTF8 {
			t.Errorf("%q: InvalidUTF8 not set", tc.in)
		}
		// The same result as the WHATWG decoding of the whole stream.
		if want := reference([]byte("data: " + tc.in + "\n\n")); len(want) != 1 || want[0].Data != tc.want {
			t.Errorf("%q: reference = %+v, disagrees with %+q", tc.in, want, tc.want)
		}
	}
	if _, st := mustDecode(t, "data: 退款\n\n"); st.InvalidUTF8 {
		t.Error("InvalidUTF8 set for valid data")
	}
}

// chunkReader returns the stream in reads that end at the given offsets.
type chunkReader struct {
	s    []byte
	cuts []int
	pos  int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.pos == len(c.s) {
		return 0, io.EOF
	}
	end := len(c.s)
	for _, cut := range c.cuts {
		if cut > c.pos {
			end = min(end, cut)
			break
		}
	}
	n := copy(p, c.s[c.pos:end])
	c.pos += n
	return n, nil
}

// chunkStream has CRLF, bare CR, multi-byte UTF-8, a BOM, ids and comments.
const chunkStream = "\xEF\xBB\xBFevent: refund\r\nid: 退1\r\ndata: {\"text\":\"退款\"}\r\n\r\n" +
	": keep\r\rdata: 款\r\n\r\n" +
	"data: a\rdata: é\n\r\n" +
	"retry: 12\r\nevent: x\r\ndata: [DONE]\r\n\r\n" +
	"data: tail\r\n"

func TestChunkBoundaries(t *testing.T) {
	s := []byte(chunkStream)
	want, wantSt, wantErr := decode(bytes.NewReader(s), 0)
	if wantErr != io.EOF || len(want) != 4 {
		t.Fatalf("whole: %d events, err %v", len(want), wantErr)
	}
	if want[0].Data != `{"text":"退款"}` || want[0].ID != "退1" || want[1].Data != "款" || want[2].Data != "a\né" || want[3].Retry != 12 {
		t.Fatalf("whole: %+v", want)
	}
	if wantSt.DiscardedTail != int64(len("data: tail\r\n")) || !wantSt.BareCR || !wantSt.BOMStripped {
		t.Fatalf("whole stats: %+v", wantSt)
	}
	check := func(name string, r io.Reader) {
		t.Helper()
		got, st, err := decode(r, 0)
		if err != io.EOF || !reflect.DeepEqual(got, want) || st != wantSt {
			t.Fatalf("%s:\n got %+v %v %+v\nwant %+v %v %+v", name, got, err, st, want, wantErr, wantSt)
		}
	}
	check("OneByteReader", iotest.OneByteReader(bytes.NewReader(s)))
	check("HalfReader", iotest.HalfReader(bytes.NewReader(s)))
	check("DataErrReader", iotest.DataErrReader(bytes.NewReader(s)))
	for i := 0; i <= len(s); i++ {
		for j := i; j <= len(s); j++ {
			check(fmt.Sprintf("cuts at %d, %d", i, j), &chunkReader{s: s, cuts: []int{i, j}})
		}
	}
}

func TestLongLines(t *testing.T) {
	// Lines much longer than the read buffer, with line ends at every
	// position relative to the buffer edge.
	var b strings.Builder
	var want []string
	for i := range 5 {
		d := strings.Repeat("x", bufSize*2+i) + "退"
		want = append(want, d)
		b.WriteString("data: " + d + []string{"\n\n", "\r\r", "\r\n\r\n"}[i%3])
	}
	for name, r := range map[string]io.Reader{
		"whole":  strings.NewReader(b.String()),
		"chunks": iotest.HalfReader(strings.NewReader(b.String())),
	} {
		evs, _, err := decode(r, 0)
		if err != io.EOF || len(evs) != len(want) {
			t.Fatalf("%s: %d events, %v", name, len(evs), err)
		}
		for i, e := range evs {
			if e.Data != want[i] {
				t.Errorf("%s: event %d has %d bytes, want %d", name, i, len(e.Data), len(want[i]))
			}
		}
	}
}

func TestOffsets(t *testing.T) {
	stream := "\xEF\xBB\xBF" + // 0..3
		": c\n\n" + // 3..8: a block without event
		"data: a\r\n\r\n" + // 8..19
		"\n" + // 19..20: blank line, empty block
		"event: b\rdata: 1\r\r" + // 20..38
		"id: 9\ndata: x\n\n" + // 38..53
		"data: tail\n" // 53..64 discarded
	evs, st := mustDecode(t, stream)
	type span struct{ Offset, End int64 }
	var got []span
	for _, e := range evs {
		got = append(got, span{e.Offset, e.End})
	}
	want := []span{{8, 19}, {20, 38}, {38, 53}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("spans = %v, want %v", got, want)
	}
	for _, e := range evs {
		if blk := stream[e.Offset:e.End]; !strings.Contains(blk, "data: "+e.Data) {
			t.Errorf("block %q does not hold its data %q", blk, e.Data)
		}
	}
	if st.DiscardedTail != 11 {
		t.Errorf("DiscardedTail = %d, want 11", st.DiscardedTail)
	}
}

func TestEventTooLarge(t *testing.T) {
	// Exactly at the limit is fine; one byte more is not.
	evs, _, err := decode(strings.NewReader("data: 0123456789\n\ndata: 01234567890\n\ndata: x\n\n"), 10)
	if len(evs) != 1 || !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("single line: %d events, err %v", len(evs), err)
	}
	if !strings.Contains(err.Error(), "offset 18") {
		t.Errorf("error %q does not name the event's offset 18", err)
	}
	// The LFs that join data lines count.
	_, _, err = decode(strings.NewReader("data: 01234\ndata: 56789\n\n"), 10)
	if !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("multi-line: err %v", err)
	}
	if evs, _, err := decode(strings.NewReader("data: 01234\ndata: 5678\n\n"), 10); err != io.EOF || len(evs) != 1 {
		t.Fatalf("multi-line at limit: %d events, err %v", len(evs), err)
	}
	// Many empty data lines grow the buffer too.
	if _, _, err := decode(strings.NewReader(strings.Repeat("data\n", 12)+"\n"), 10); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("empty lines: err %v", err)
	}
	// A line without end over an endless reader must fail, not grow.
	sr := NewReader(iotest.OneByteReader(endless('x')))
	sr.SetMaxEventSize(1000)
	done := make(chan error, 1)
	go func() { _, err := sr.Next(); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrEventTooLarge) {
			t.Fatalf("endless line: err %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("endless line: Next did not return")
	}
	// The error sticks.
	if _, err2 := sr.Next(); !errors.Is(err2, ErrEventTooLarge) {
		t.Fatalf("second Next: %v", err2)
	}
}

type endless byte

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(e)
	}
	return len(p), nil
}

func TestReadError(t *testing.T) {
	boom := errors.New("connection reset")
	sr := NewReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(boom)))
	ev, err := sr.Next()
	if err != nil || ev.Data != "a" {
		t.Fatalf("first: %+v %v", ev, err)
	}
	for range 2 {
		_, err = sr.Next()
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), "offset 17") {
			t.Fatalf("err = %v, want %v at offset 17", err, boom)
		}
	}
	if !sr.Pending() {
		t.Error("Pending = false with \"data: b\" undispatched")
	}
	if st := sr.Stats(); st.DiscardedTail != 0 {
		t.Errorf("DiscardedTail = %d after a read error, want 0", st.DiscardedTail)
	}
	// Events complete before the error are all returned first, even when
	// the error comes with the last bytes; a CR at the end is a line end.
	sr = NewReader(&errAfter{s: "data: a\n\ndata: b\r\r", err: boom})
	var got []string
	for ev, err := range sr.All() {
		if err != nil {
			if !errors.Is(err, boom) {
				t.Fatalf("err = %v", err)
			}
			break
		}
		got = append(got, ev.Data)
	}
	if !reflect.DeepEqual(got, []string{"a", "b"}) || sr.Pending() {
		t.Fatalf("got %q, Pending %v", got, sr.Pending())
	}
}

// errAfter returns all of s together with err.
type errAfter struct {
	s   string
	err error
}

func (e *errAfter) Read(p []byte) (int, error) {
	n := copy(p, e.s)
	e.s = e.s[n:]
	if e.s == "" {
		return n, e.err
	}
	return n, nil
}

func TestReturnsWithoutWaiting(t *testing.T) {
	for _, first := range []string{"event: a\ndata: 1\n\n", "event: a\r\ndata: 1\r\n\r\n", ": hi\n\nevent: a\ndata: 1\n\n"} {
		pr, pw := io.Pipe()
		release := make(chan struct{})
		go func() {
			pw.Write([]byte(first))
			<-release // the writer blocks: the reader must not need more
			pw.Write([]byte("data: 2\n\n"))
			pw.Close()
		}()
		sr := NewReader(pr)
		got := make(chan Event, 1)
		go func() {
			ev, err := sr.Next()
			if err != nil {
				t.Error(err)
			}
			got <- ev
		}()
		select {
		case ev := <-got:
			if ev.Type != "a" || ev.Data != "1" {
				t.Fatalf("%q: first event %+v", first, ev)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%q: Next waited for bytes after the blank line", first)
		}
		if sr.Pending() {
			t.Errorf("%q: Pending after a whole event", first)
		}
		close(release)
		if ev, err := sr.Next(); err != nil || ev.Data != "2" {
			t.Fatalf("second: %+v %v", ev, err)
		}
		if _, err := sr.Next(); err != io.EOF {
			t.Fatalf("end: %v", err)
		}
	}
}

func TestAll(t *testing.T) {
	sr := NewReader(strings.NewReader("data: 1\n\ndata: 2\n\ndata: 3\n\n"))
	var got []string
	for ev, err := range sr.All() {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Data)
		if ev.Data == "2" {
			break
		}
	}
	if !reflect.DeepEqual(got, []string{"1", "2"}) {
		t.Fatalf("got %q", got)
	}
	// Iteration can resume after a break.
	for ev, err := range sr.All() {
		if err != nil || ev.Data != "3" {
			t.Fatalf("resumed: %+v %v", ev, err)
		}
	}
	sr = NewReader(strings.NewReader("data: 12345\n\n"))
	sr.SetMaxEventSize(2)
	n := 0
	for _, err := range sr.All() {
		n++
		if !errors.Is(err, ErrEventTooLarge) {
			t.Fatalf("err = %v", err)
		}
	}
	if n != 1 {
		t.Fatalf("error yielded %d times", n)
	}
}

// reference decodes a whole stream by the WHATWG algorithm written out
// plainly: UTF-8 decode all bytes first, then split lines in the text. It
// shares no code with Reader. Offsets are not computed.
func reference(b []byte) []Event {
	s := whatwgUTF8Decode(b)
	var evs []Event
	var data, typ strings.Builder
	var lastID string
	hasData, hasID, retry := false, false, 0
	for {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			return evs // the rest is discarded
		}
		line := s[:i]
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			s = s[i+2:]
		} else {
			s = s[i+1:]
		}
		if line == "" {
			if hasData {
				d := strings.TrimSuffix(data.String(), "\n")
				evs = append(evs, Event{Type: typ.String(), Data: d, ID: lastID, HasID: hasID, Retry: retry})
			}
			data.Reset()
			typ.Reset()
			hasData, hasID, retry = false, false, 0
			continue
		}
		if line[0] == ':' {
			continue
		}
		name, value, found := strings.Cut(line, ":")
		if found {
			value = strings.TrimPrefix(value, " ")
		}
		switch name {
		case "event":
			typ.Reset()
			typ.WriteString(value)
		case "data":
			data.WriteString(value + "\n")
			hasData = true
		case "id":
			if !strings.ContainsRune(value, 0) {
				lastID, hasID = value, true
			}
		case "retry":
			if value != "" && strings.Trim(value, "0123456789") == "" {
				retry, _ = strconv.Atoi(value) // saturates on overflow
			}
		}
	}
}

// whatwgUTF8Decode is the WHATWG Encoding standard's "UTF-8 decode": strip
// one BOM, then run the UTF-8 decoder, which emits U+FFFD per error and
// re-reads the byte that caused it.
func whatwgUTF8Decode(b []byte) string {
	b = bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF"))
	var out []rune
	cp, needed, seen := 0, 0, 0
	lower, upper := byte(0x80), byte(0xBF)
	for i := 0; i < len(b); {
		c := b[i]
		if needed == 0 {
			switch {
			case c <= 0x7F:
				out = append(out, rune(c))
			case c >= 0xC2 && c <= 0xDF:
				needed, cp = 1, int(c&0x1F)
			case c >= 0xE0 && c <= 0xEF:
				if c == 0xE0 {
					lower = 0xA0
				}
				if c == 0xED {
					upper = 0x9F
				}
				needed, cp = 2, int(c&0xF)
			case c >= 0xF0 && c <= 0xF4:
				if c == 0xF0 {
					lower = 0x90
				}
				if c == 0xF4 {
					upper = 0x8F
				}
				needed, cp = 3, int(c&0x7)
			default:
				out = append(out, utf8.RuneError)
			}
			i++
			continue
		}
		if c < lower || c > upper {
			cp, needed, seen = 0, 0, 0
			lower, upper = 0x80, 0xBF
			out = append(out, utf8.RuneError)
			continue // c is read again
		}
		lower, upper = 0x80, 0xBF
		cp = cp<<6 | int(c&0x3F)
		seen++
		i++
		if seen == needed {
			out = append(out, rune(cp))
			cp, needed, seen = 0, 0, 0
		}
	}
	if needed != 0 {
		out = append(out, utf8.RuneError)
	}
	return string(out)
}

func TestAgainstReference(t *testing.T) {
	for _, s := range fuzzSeeds {
		got, _, err := decode(strings.NewReader(s), 0)
		if err != io.EOF {
			t.Fatalf("%q: %v", s, err)
		}
		for i := range got {
			got[i].Offset, got[i].End = 0, 0
		}
		if want := reference([]byte(s)); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("%q:\n got %+v\nwant %+v", s, got, want)
		}
	}
}

var fuzzSeeds = []string{
	"",
	chunkStream,
	"event: response.output_text.delta\ndata: {\"delta\":\"hi\"}\n\n",
	"data: a\r\ndata: b\r\n\r\n",
	"data: a\rdata: b\r\r",
	"\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\n",
	"data\n\ndata:\n\ndata: \n\n",
	"event: x\n\ndata: y\n\n",
	"id: 1\ndata: a\n\ndata: b\n\nid: \x00\ndata: c\n\n",
	"retry: 10\ndata: a\n\nretry: 1x\ndata: b\n\n",
	"data: \xFF\xE2\x82\n\xF0\x9F\x98\x80\n\n",
	": comment\n\nfoo: bar\ndata: z\n\n",
	"data: [DONE]\n",
	"data: a\n\r\n\r\r\n",
}

func FuzzReader(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), uint16(0))
		f.Add([]byte(s), uint16(8))
	}
	f.Fuzz(func(t *testing.T, stream []byte, limit uint16) {
		max := int(limit) // 0: the default limit
		whole, wholeSt, wholeErr := decode(bytes.NewReader(stream), max)
		one, oneSt, oneErr := decode(iotest.OneByteReader(bytes.NewReader(stream)), max)
		if !reflect.DeepEqual(whole, one) || fmt.Sprint(wholeErr) != fmt.Sprint(oneErr) || wholeSt != oneSt {
			t.Fatalf("whole vs one byte at a time:\n%+v %v %+v\n%+v %v %+v", whole, wholeErr, wholeSt, one, oneErr, oneSt)
		}
		if wholeErr != io.EOF && !errors.Is(wholeErr, ErrEventTooLarge) {
			t.Fatalf("unexpected error %v", wholeErr)
		}
		prevEnd := int64(0)
		for _, e := range whole {
			if !utf8.ValidString(e.Data) || !utf8.ValidString(e.Type) || !utf8.ValidString(e.ID) {
				t.Fatalf("invalid UTF-8 in %+v", e)
			}
			if e.Offset < prevEnd || e.End <= e.Offset || e.End > int64(len(stream)) {
				t.Fatalf("bad span %d..%d after %d in %d bytes", e.Offset, e.End, prevEnd, len(stream))
			}
			if c := stream[e.End-1]; c != '\n' && c != '\r' {
				t.Fatalf("event ends at %d on %q, not a line end", e.End, c)
			}
			prevEnd = e.End
		}
		// The events before any error are those of the plain WHATWG decoding.
		ref := reference(stream)
		for i := range whole {
			whole[i].Offset, whole[i].End = 0, 0
		}
		if len(whole) > len(ref) || (wholeErr == io.EOF && len(whole) != len(ref)) {
			t.Fatalf("%d events, reference has %d", len(whole), len(ref))
		}
		if len(whole) > 0 && !reflect.DeepEqual(whole, ref[:len(whole)]) {
			t.Fatalf("events differ from the reference:\n got %+v\nwant %+v", whole, ref[:len(whole)])
		}
	})
}

// Data strings share chunks of memory with the events after them (and
// large ones keep their buffer): every string handed out must stay as it
// was while later events are read, at every size around the chunk's
// limits, in one data line or several.
func TestDataStringsStayPut(t *testing.T) {
	var b bytes.Buffer
	var want []string
	for i := 0; i < 3000; i++ {
		n := (i * 37) % 700
		if i%97 == 0 {
			n = 4000 + i // over arenaSize/8: a buffer of its own
		}
		v := strings.Repeat(string(rune('a'+i%26)), n) + fmt.Sprint(i)
		if i%5 == 0 {
			b.WriteString("data: " + v[:len(v)/2] + "\ndata: " + v[len(v)/2:] + "\n\n")
			v = v[:len(v)/2] + "\n" + v[len(v)/2:]
		} else {
			b.WriteString("event: e\ndata: " + v + "\n\n")
		}
		want = append(want, v)
	}
	r := NewReader(&b)
	var got []string
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Data)
	}
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event %d changed after later events were read: %.40q…, want %.40q…", i, got[i], want[i])
		}
	}
}
