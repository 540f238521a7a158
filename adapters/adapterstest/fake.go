package adapterstest

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/modelwire/modelwire/adapters"
)

// FakeChat is a toy protocol for the tests of what stores and moves
// sessions (store, har, jsonl): each SSE data is {"d":"text"} (a text
// delta of one message), {"finish":"stop"} or [DONE]; a body is
// {"text":"…"}. It encodes nothing.
type FakeChat struct{ ProtocolName string }

// FakeLookup is a registry lookup that answers FakeChat for every name.
func FakeLookup(name string) (adapters.Protocol, error) { return FakeChat{ProtocolName: name}, nil }

func (f FakeChat) Name() string               { return f.ProtocolName }
func (FakeChat) Framing() adapters.Framing    { return adapters.FramingSSE }
func (FakeChat) NewDecoder() adapters.Decoder { return &fakeDecoder{} }
func (FakeChat) Encode(*adapters.Request, string) (*adapters.HTTPRequest, error) {
	return nil, errors.New("not needed")
}
func (FakeChat) DecodeBody(body []byte) []adapters.Event {
	var b struct{ Text string }
	if err := json.Unmarshal(body, &b); err != nil {
		return []adapters.Event{adapters.Diag(adapters.DiagMalformedEvent, err.Error())}
	}
	return []adapters.Event{{Type: adapters.EvItemStarted, ItemID: "m", Kind: "message"},
		{Type: adapters.EvTextDelta, ItemID: "m", Delta: b.Text}, {Type: adapters.EvItemDone, ItemID: "m"},
		adapters.Terminal(adapters.StatusCompleted, adapters.StopFinal, "stop")}
}
func (FakeChat) DecodeError(status int, h http.Header, body []byte) *adapters.APIError {
	return adapters.GenericError(status, h, body)
}

type fakeDecoder struct{ started bool }

func (d *fakeDecoder) Decode(raw adapters.RawEvent) []adapters.Event {
	if raw.Data == "[DONE]" {
		return nil
	}
	var m struct {
		D      *string
		Finish string
	}
	if err := json.Unmarshal([]byte(raw.Data), &m); err != nil {
		return []adapters.Event{adapters.Diag(adapters.DiagMalformedEvent, err.Error())}
	}
	var out []adapters.Event
	if !d.started {
		d.started = true
		out = append(out, adapters.Event{Type: adapters.EvItemStarted, ItemID: "m", Kind: "message"})
	}
	if m.D != nil {
		out = append(out, adapters.Event{Type: adapters.EvTextDelta, ItemID: "m", Delta: *m.D})
	}
	if m.Finish != "" {
		out = append(out, adapters.Event{Type: adapters.EvItemDone, ItemID: "m"}, adapters.Terminal(adapters.StatusCompleted, adapters.StopFinal, m.Finish))
	}
	return out
}
func (d *fakeDecoder) Finish() []adapters.Event { return nil }
