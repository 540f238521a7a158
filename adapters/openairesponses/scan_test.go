package openairesponses

import (
	"bufio"
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters/adapterstest"
)

// referenceScan is scanMembers written with gjson.ForEach: slower, and
// obviously right. The fast scanner must agree with it.
func referenceScan(data string) (fields, bool) {
	var f fields
	root := gjson.Parse(data)
	if !root.IsObject() {
		return f, false
	}
	root.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "type":
			f.typ, f.hasType = v.Str, v.Type == gjson.String
		case "sequence_number":
			f.seq, f.hasSeq = v.Int(), v.Type == gjson.Number
		case "item_id":
			f.itemID = v.Str
		case "output_index":
			f.outIdx, f.hasIdx = v.Int(), v.Type == gjson.Number
		case "content_index":
			f.contentIdx = v.Int()
		case "summary_index":
			f.summaryIdx = v.Int()
		case "delta":
			f.delta, f.hasDelta = v.Str, v.Type == gjson.String
			if f.hasDelta && f.hasType && f.hasSeq && f.hasIdx && strings.HasSuffix(f.typ, ".delta") {
				return false // scanMembers stops after a delta event's delta
			}
		case "response":
			f.response = v
		case "item":
			f.item = v
		case "part":
			f.part = v
		case "error":
			f.err = v
		case "code":
			f.code = v
		case "message":
			f.message = v
		case "text":
			f.text = v
		case "arguments":
			f.arguments = v
		case "refusal":
			f.refusal = v
		}
		return true
	})
	if f.typ != "" && !f.hasType {
		f.typ = ""
	}
	if !f.hasDelta {
		f.delta = ""
	}
	return f, true
}

// comparable reduces fields to what the decoder reads from them.
func comparable(f fields) []any {
	out := []any{f.typ, f.itemID, f.delta, f.seq, f.outIdx, f.contentIdx, f.summaryIdx, f.hasSeq, f.hasIdx, f.hasType, f.hasDelta}
	for _, r := range []gjson.Result{f.response, f.item, f.part, f.err, f.code, f.message, f.text, f.arguments, f.refusal} {
		out = append(out, r.Type, r.Raw, r.Str)
	}
	return out
}

func checkScan(t *testing.T, data string) {
	t.Helper()
	if !gjson.Valid(data) {
		return
	}
	var got fields
	_, okGot := scanMembers(data, &got)
	want, okWant := referenceScan(data)
	if okGot != okWant || (okGot && !reflect.DeepEqual(comparable(got), comparable(want))) {
		t.Errorf("scan of %.200q\n got %v\nwant %v", data, comparable(got), comparable(want))
	}
}

func TestScanMatchesGJSON(t *testing.T) {
	n := 0
	for _, body := range adapterstest.SeedsFromTestdata(t, ".sse") {
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				checkScan(t, line)
				n++
			}
		}
	}
	for _, s := range []string{
		`{"type":"x","sequence_number":-3,"output_index":1.5e2,"delta":"a\"b\\u00e9"}`,
		` { "type" : "x" , "item_id" : "i" , "delta" : null , "sequence_number" : 12345678901234567890 } `,
		`{"t\u0079pe":"escaped key","delta":5,"type":7}`,
		`{"item":{"a":[1,{"b":"}]"}]},"part":[],"text":"","error":"s"}`,
		`[1]`, `"s"`, `{}`,
	} {
		checkScan(t, s)
		n++
	}
	if n < 400 {
		t.Fatalf("only %d events checked", n)
	}
}

// FuzzScan checks the fast member scanner against gjson.ForEach.
func FuzzScan(f *testing.F) {
	f.Add(`{"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"您好","logprobs":[],"obfuscation":"x"}`)
	f.Add(`{"type":"error","error":{"type":"t","code":null,"message":"m"}}`)
	f.Fuzz(func(t *testing.T, data string) { checkScan(t, data) })
}
