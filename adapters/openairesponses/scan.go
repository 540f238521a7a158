package openairesponses

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters/wire"
)

// scanMembers validates data and reads its top-level members into f in
// the same pass (wire.Members): only the members the decoder uses are
// parsed, every other value is only validated. valid reports whether data
// is JSON, object whether it is an object.
//
// Why not gjson.Valid then gjson.ForEach: that reads every byte twice and
// builds a Result for every member (logprobs, obfuscation…), on delta
// events as costly as the validation itself, and deltas are nearly every
// event of a stream.
func scanMembers(data string, f *fields) (valid, object bool) {
	done := false
	return wire.Members(data, func(key, raw string) {
		if done {
			return
		}
		f.set(key, raw)
		// A delta event's members after its delta are logprobs and
		// obfuscation: nothing the decoder reads — when, as in the API's
		// older member order, sequence_number and output_index came
		// first (since 2026-08 the API sorts the members after "type",
		// so delta precedes them). They are still validated.
		done = key == "delta" && f.hasDelta && f.hasSeq && f.hasIdx && strings.HasSuffix(f.typ, ".delta")
	})
}

// set stores one member's raw value.
func (f *fields) set(key, raw string) {
	switch key {
	case "type":
		f.typ, f.hasType = wire.Unquote(raw), wire.IsString(raw)
	case "sequence_number":
		f.seq, f.hasSeq = wire.GJSONInt(raw)
	case "item_id":
		f.itemID = wire.Unquote(raw)
	case "output_index":
		f.outIdx, f.hasIdx = wire.GJSONInt(raw)
	case "content_index":
		f.contentIdx, _ = wire.GJSONInt(raw)
	case "summary_index":
		f.summaryIdx, _ = wire.GJSONInt(raw)
	case "delta":
		f.delta, f.hasDelta = wire.Unquote(raw), wire.IsString(raw)
	case "response":
		f.response = gjson.Parse(raw)
	case "item":
		f.item = gjson.Parse(raw)
	case "part":
		f.part = gjson.Parse(raw)
	case "error":
		f.err = gjson.Parse(raw)
	case "code":
		f.code = gjson.Parse(raw)
	case "message":
		f.message = gjson.Parse(raw)
	case "text":
		f.text = gjson.Parse(raw)
	case "arguments":
		f.arguments = gjson.Parse(raw)
	case "refusal":
		f.refusal = gjson.Parse(raw)
	}
}
