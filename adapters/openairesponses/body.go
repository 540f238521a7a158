package openairesponses

import (
	"bytes"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
)

// DecodeBody decodes a whole non-streaming body: a Response object (its
// output items, status, usage), or an error body sent with a 2xx status.
func (Protocol) DecodeBody(body []byte) []adapters.Event {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	data := string(body)
	d := newDecoder()
	if !gjson.Valid(data) {
		d.emit(adapters.Diag(adapters.DiagMalformedEvent, "the body is not valid JSON: "+quote(data)))
		return d.out
	}
	root := gjson.Parse(data)
	if !root.IsObject() {
		d.emit(adapters.Diag(adapters.DiagMalformedEvent, "the body is not a JSON object: "+quote(data)))
		return d.out
	}
	if !root.Get("id").Exists() && !root.Get("object").Exists() && root.Get("error").Exists() {
		f := fields{err: root.Get("error")}
		d.errorEvent(&f)
		return d.out
	}
	d.finish(root, "response")
	return d.out
}
