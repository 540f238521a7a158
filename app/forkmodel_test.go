package app

import (
	"testing"

	"github.com/modelwire/modelwire/adapters"
)

// TestWithModelAndStreamedReadTheDescriptor: a protocol that names its
// model in the path gets the new model there (query kept) and says it
// streams by the path's action; the others by the body.
func TestWithModelAndStreamedReadTheDescriptor(t *testing.T) {
	r := &adapters.HTTPRequest{Path: "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", Body: []byte(`{"contents":[]}`)}
	if !streamed(adapters.Gemini, r) {
		t.Error("gemini: the path's :streamGenerateContent is a stream")
	}
	got, err := withModel(adapters.Gemini, r, "gemini-2.5-pro")
	if err != nil || got.Path != "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse" || string(got.Body) != `{"contents":[]}` {
		t.Errorf("gemini: %v %s %s", err, got.Path, got.Body)
	}
	if _, err := withModel(adapters.Gemini, &adapters.HTTPRequest{Path: "/v1beta/generate"}, "m"); err == nil {
		t.Error("gemini: a path naming no model is refused")
	}
	c := &adapters.HTTPRequest{Path: "/v1/chat/completions", Body: []byte(`{"model":"a","stream":true}`)}
	if !streamed(adapters.OpenAIChat, c) {
		t.Error("chat: the body's stream")
	}
	got, err = withModel(adapters.OpenAIChat, c, "b")
	if err != nil || got.Path != "/v1/chat/completions" || string(got.Body) != `{"model":"b","stream":true}` {
		t.Errorf("chat: %v %s %s", err, got.Path, got.Body)
	}
}
