package sse

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sync"
	"testing"
)

// benchStream is ~50 MB of typical LLM stream events (OpenAI Responses
// deltas with an occasional Anthropic-style ping), built once.
var benchStream = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	words := []string{" the", " refund", " policy", " 退款", " allows", " returns", " within", " 30", " days", "."}
	for i := 0; b.Len() < 50<<20; i++ {
		if i%200 == 0 {
			b.WriteString("event: ping\ndata: {\"type\":\"ping\"}\n\n")
			continue
		}
		fmt.Fprintf(&b, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":%d,"+
			"\"item_id\":\"msg_68a1f0c2d4e88193b1a7c0f5e2d94b3a\",\"output_index\":0,\"content_index\":0,"+
			"\"delta\":%q,\"logprobs\":[],\"obfuscation\":\"Xk2pQ9\"}\n\n", i, words[i%len(words)])
	}
	return b.Bytes()
})

func BenchmarkReader(b *testing.B) {
	data := benchStream()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	events := 0
	for b.Loop() {
		sr := NewReader(bytes.NewReader(data))
		events = 0
		for {
			_, err := sr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			events++
		}
	}
	b.ReportMetric(float64(events), "events/op")
}

// BenchmarkBareScanner is the floor to compare with: line splitting only,
// no field parsing and no events.
func BenchmarkBareScanner(b *testing.B) {
	data := benchStream()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		sc := bufio.NewScanner(bytes.NewReader(data))
		lines := 0
		for sc.Scan() {
			lines++
		}
		if sc.Err() != nil {
			b.Fatal(sc.Err())
		}
	}
}

// BenchmarkSDKStyleDecoder is what the official SDK decoders do (a
// bufio.Scanner split on LF, fields cut at ':', one string per event) and
// not WHATWG-exact: the cost of the same output, for comparison.
func BenchmarkSDKStyleDecoder(b *testing.B) {
	data := benchStream()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		sc := bufio.NewScanner(bytes.NewReader(data))
		var buf []byte
		var typ, last string
		events := 0
		for sc.Scan() {
			line := sc.Bytes()
			if len(line) == 0 {
				if len(buf) > 0 {
					last = string(buf[:len(buf)-1])
					events++
				}
				buf, typ = buf[:0], ""
				continue
			}
			name, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(name) {
			case "data":
				buf = append(append(buf, value...), '\n')
			case "event":
				typ = string(value)
			}
		}
		_, _ = typ, last
	}
}
