package copyout

import (
	"strings"
	"testing"
)

// A key the request carried never reaches a snippet: each format names
// the provider's variable instead; members the SDK call does not take go
// in extra_body; a Gemini key= query parameter is dropped for the header.
func TestSnippetsNeverCarryTheKey(t *testing.T) {
	reqs := []Request{
		{Method: "POST", URL: "https://api.deepseek.com/chat/completions", Protocol: "deepseek-chat", Provider: "deepseek",
			Headers: map[string]string{"Authorization": "Bearer sk-live-123", "Content-Type": "application/json", "User-Agent": "x"},
			Body:    []byte(`{"model":"deepseek-chat","messages":[{"role":"user","content":"hi"}],"thinking":{"type":"enabled"},"stream":true}`)},
		{Method: "POST", URL: "https://generativelanguage.googleapis.com/v1beta/interactions?key=sk-live-123", Protocol: "gemini-interactions",
			Provider: "gemini", Headers: map[string]string{"x-goog-api-key": "sk-live-123"}, Body: []byte(`{"model":"m","input":"hi"}`)},
		{Method: "POST", URL: "https://api.anthropic.com/v1/messages", Protocol: "anthropic-messages", Provider: "anthropic",
			Headers: map[string]string{"x-api-key": "sk-live-123", "anthropic-version": "2023-06-01", "anthropic-beta": "b1"},
			Body:    []byte(`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"it's"}]}`)},
	}
	env := []string{"DEEPSEEK_API_KEY", "GEMINI_API_KEY", "ANTHROPIC_API_KEY"}
	for i, r := range reqs {
		for _, f := range Formats {
			out, err := Write(f, r)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(out, "sk-live-123") || !strings.Contains(out, env[i]) || strings.Contains(out, "User-Agent") {
				t.Errorf("%s of %s:\n%s", f, r.Protocol, out)
			}
		}
	}
	py := Python(reqs[0])
	for _, want := range []string{`base_url="https://api.deepseek.com"`, `extra = json.loads(`, `"thinking"`, `extra_body=extra`, `for event in client.chat.completions.create(`} {
		if !strings.Contains(py, want) {
			t.Errorf("python lacks %q:\n%s", want, py)
		}
	}
	if c := Curl(reqs[2]); !strings.Contains(c, `'\''`) || !strings.Contains(c, `anthropic-beta: b1`) {
		t.Errorf("curl does not quote the body's ' or lost a header:\n%s", c)
	}
	if ts := TypeScript(reqs[2]); !strings.Contains(ts, `{ headers: { "anthropic-beta": "b1" } }`) {
		t.Errorf("ts lost the beta header:\n%s", ts)
	}
	if _, err := Write("perl", reqs[0]); err == nil {
		t.Error("an unknown format is not an error")
	}
}

// The Python snippet shows <, > and & as they are: its JSON is not
// HTML-escaped to \u003c, \u003e, \u0026 (issue 27).
func TestPythonKeepsAngleBracketsAndAmpersands(t *testing.T) {
	text := `a <b> & c`
	for _, r := range []Request{
		{Method: "POST", URL: "https://api.openai.com/v1/chat/completions", Protocol: "openai-chat", Provider: "openai",
			Body: []byte(`{"model":"m","messages":[{"role":"user","content":"` + text + `"}],"thinking":"` + text + `"}`)},
		{Method: "POST", URL: "https://api.anthropic.com/v1/messages", Protocol: "anthropic-messages", Provider: "anthropic",
			Body: []byte(`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"` + text + `"}]}`)},
	} {
		py := Python(r)
		if strings.Contains(py, `\u003c`) || strings.Contains(py, `\u003e`) || strings.Contains(py, `\u0026`) || strings.Count(py, text) < 1 {
			t.Errorf("%s: the snippet escapes <, > or &:\n%s", r.Protocol, py)
		}
	}
	// In extra_body too.
	if py := Python(Request{Method: "POST", URL: "https://api.openai.com/v1/chat/completions", Protocol: "openai-chat", Provider: "openai",
		Body: []byte(`{"model":"m","messages":[],"thinking":"` + text + `"}`)}); !strings.Contains(py, `extra = json.loads(r'''{`) || strings.Count(py, text) != 1 {
		t.Errorf("extra_body escapes <, > or &:\n%s", py)
	}
}
