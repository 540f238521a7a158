package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func runMain(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestDecodeSummaryFromStdin(t *testing.T) {
	stream := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"退款\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":3}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	code, out, errs := runMain(t, stream, "decode", "--protocol", "anthropic-messages", "--summary", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var s map[string]any
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	if s["terminal"] != "completed" || s["stop_reason"] != "final" || s["text"] != "退款" || s["response_id"] != "msg_1" {
		t.Fatalf("summary %v", s)
	}
}

func TestDecodeGarbageGivesDiagnosticsNotACrash(t *testing.T) {
	for _, p := range []string{"openai-responses", "openai-chat", "anthropic-messages", "gemini", "deepseek-chat", "claude-code"} {
		code, out, errs := runMain(t, "data: {not json\n\ndata: [1,2\n\n\x00\xff garbage", "decode", "--protocol", p, "-")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", p, code, errs)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		var last map[string]any
		_ = json.Unmarshal([]byte(lines[len(lines)-1]), &last)
		if last["type"] != "response.terminal" || last["status"] != "unknown" {
			t.Fatalf("%s: last event %v", p, lines[len(lines)-1])
		}
		if !strings.Contains(out, `"type":"diagnostic"`) {
			t.Fatalf("%s: no diagnostics in %s", p, out)
		}
	}
}

// goldenSummary finds the adapter test's golden summary of a capture (each
// adapter names them its own way) and reads it; ok is false when there is
// none.
func goldenSummary(t *testing.T, capture string) (any, bool) {
	t.Helper()
	dir, b := filepath.Split(capture)
	names := []string{b + ".golden.json", b + ".summary.golden.json", strings.ReplaceAll(b, ".", "_") + ".golden.json"}
	if stem, ok := strings.CutSuffix(b, ".sse"); ok {
		names = append(names, stem+".golden.json")
	}
	if stem, ok := strings.CutSuffix(b, ".body.json"); ok {
		names = append(names, stem+"_body.golden.json")
	}
	for _, n := range names {
		raw, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			continue
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		return v, true
	}
	return nil, false
}

// errorBody matches the captures that are HTTP error bodies; the adapters
// test them against their SDKs' errors, not with golden summaries.
var errorBody = regexp.MustCompile(`(^error_[0-9a-z_]+\.json$|\.error\.json$|^error_body\.json$)`)

// TestDecodeEveryCapture: `decode --summary` of every capture equals the
// adapter's golden summary of it, field for field; an error body without
// one decodes to a failed terminal with the provider's message.
func TestDecodeEveryCapture(t *testing.T) {
	dirs := map[string]string{
		"openai-responses":   "../adapters/openairesponses/testdata",
		"openai-chat":        "../adapters/openaichat/testdata",
		"anthropic-messages": "../adapters/anthropic/testdata",
		"gemini":             "../adapters/gemini/testdata",
		"claude-code":        "../adapters/claudecode/testdata",
	}
	compared := 0
	for p, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, f := range files {
			if strings.HasSuffix(f, ".golden.json") || strings.HasSuffix(f, ".md") || strings.Contains(f, "fuzz") {
				continue
			}
			if st, err := os.Stat(f); err != nil || st.IsDir() {
				continue
			}
			proto := p
			if p == "openai-chat" && strings.Contains(filepath.Base(f), "deepseek") {
				proto = "deepseek-chat"
			}
			code, out, errs := runMain(t, "", "decode", "--protocol", proto, "--summary", f)
			var got map[string]any
			if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
				t.Errorf("%s: exit %d %s %s", f, code, errs, out)
				continue
			}
			want, ok := goldenSummary(t, f)
			switch {
			case ok:
				compared++
				if !reflect.DeepEqual(any(got), want) {
					g, _ := json.Marshal(got)
					w, _ := json.Marshal(want)
					t.Errorf("%s: decode --summary differs from the golden summary\n got %s\nwant %s", f, g, w)
				}
			case errorBody.MatchString(filepath.Base(f)):
				e, _ := got["error"].(map[string]any)
				if got["terminal"] != "failed" || e == nil || e["message"] == "" {
					t.Errorf("%s: an error body decoded to %s", f, out)
				}
			default:
				t.Errorf("%s has no golden summary", f)
			}
		}
	}
	if compared < 100 {
		t.Fatalf("only %d captures compared with golden summaries", compared)
	}
}

func TestDecodeBadUsage(t *testing.T) {
	cases := [][]string{
		{"decode", "x"},
		{"decode", "--protocol", "nope", "x"},
		{"decode", "--protocol", "gemini", "/no/such/file"},
		{"decode", "--protocol", "gemini", "--bogus"},
	}
	for _, c := range cases {
		code, out, errs := runMain(t, "", c...)
		if code != 2 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 || errs == "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", c, code, out, errs)
		}
	}
}
