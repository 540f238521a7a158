package sim_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/transport"
)

// refundIDs are call ids every protocol accepts.
var refundIDs = adapterstest.IDs{Call: func(turn, i int) string {
	return [][]string{nil, {"call_order"}, {"call_ledger", "call_policy"}}[turn][i]
}}

// exchangeRaw sends an encoded request to the simulator and returns the
// decoded final text and the response headers; edit, when set, changes
// the wire body first (a client's own shapes).
func exchangeRaw(t *testing.T, base, protocol string, req *adapters.Request, edit func([]byte) []byte) (string, http.Header) {
	t.Helper()
	p, _ := registry.Lookup(protocol)
	wire, err := p.Encode(req, adapters.ProviderSim)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(wire.Body)
	if edit != nil {
		body = edit(body)
	}
	hreq, _ := http.NewRequest(wire.Method, transport.Provider{BaseURL: base}.URL(wire.Path), bytes.NewReader(body))
	for k, v := range wire.Headers {
		hreq.Header.Set(k, v)
	}
	transport.Provider{Key: "k"}.Authorize(hreq.Header, protocol)
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d %s", protocol, resp.StatusCode, b)
	}
	st := adapters.NewStream(p)
	st.FeedBody(b)
	return st.Summary().Text, resp.Header
}

// Tool results are read as a model reads them, whatever shape the client
// sends them in, on every protocol: the chapter's answer each time.
func TestResultsInAnyShape(t *testing.T) {
	base := start(t, "", sim.Options{})
	shapes := map[string]func(name, content string) string{
		"flat":           func(_, c string) string { return c },
		"output":         func(_, c string) string { return `{"output":` + c + `}` },
		"result":         func(_, c string) string { return `{"result":` + c + `}` },
		"name+content":   func(n, c string) string { return `{"name":"` + n + `","content":` + c + `}` },
		"content":        func(_, c string) string { return `{"content":` + c + `}` },
		"response":       func(n, c string) string { return `{"tool_name":"` + n + `","response":` + c + `}` },
		"string of JSON": func(_, c string) string { b, _ := json.Marshal(c); return string(b) },
		"text blocks":    func(_, c string) string { b, _ := json.Marshal(c); return `[{"type":"text","text":` + string(b) + `}]` },
	}
	for _, protocol := range registry.Protocols {
		for name, shape := range shapes {
			req := adapterstest.RefundRequest(3, refundIDs, false)
			for i := range req.Turns {
				for j, r := range req.Turns[i].Results {
					req.Turns[i].Results[j].Content = shape(r.Name, r.Content)
				}
			}
			if text, _ := exchangeRaw(t, base, protocol, req, nil); text != adapterstest.RefundModelText {
				t.Errorf("%s, results as %s: %s", protocol, name, text)
			}
		}
	}
}

// The Vercel AI SDK's Google provider sends functionResponse.response as
// {"name": …, "content": {…}}: the chapter's answer, not a cap of 0.
func TestGeminiResultsAsTheAISDKSendsThem(t *testing.T) {
	base := start(t, "", sim.Options{})
	req := adapterstest.RefundRequest(3, refundIDs, false)
	text, _ := exchangeRaw(t, base, adapters.Gemini, req, func(body []byte) []byte {
		for i, c := range gjson.GetBytes(body, "contents").Array() {
			for j, p := range c.Get("parts").Array() {
				fr := p.Get("functionResponse")
				if !fr.Exists() {
					continue
				}
				inner := fr.Get("response.output").Raw
				path := "contents." + strconv.Itoa(i) + ".parts." + strconv.Itoa(j) + ".functionResponse.response"
				body, _ = sjson.SetRawBytes(body, path, []byte(`{"name":"`+fr.Get("name").String()+`","content":`+inner+`}`))
			}
		}
		if !strings.Contains(string(body), `"content":{"status":"ok","evidence_id":"E-ledger"`) {
			t.Fatalf("the body was not rewritten: %s", body)
		}
		return body
	})
	if text != adapterstest.RefundModelText {
		t.Fatalf("the AI SDK's result shape: %s", text)
	}
}

// Each answer says which rules fired, in a header, never in the body.
func TestWhyHeaderNamesTheRules(t *testing.T) {
	base := start(t, "", sim.Options{})
	req := adapterstest.RefundRequest(3, refundIDs, false)
	text, h := exchangeRaw(t, base, adapters.AnthropicMessages, req, nil)
	why := session.WhyLines(h)
	if len(why) == 0 || !strings.HasPrefix(why[0], "task-facts: the task names order O-2048, line L1, 15000 cents requested") ||
		!strings.Contains(strings.Join(why, "\n"), `history-unverified: the history's 15000 cents is marked verified="false"`) {
		t.Fatalf("why: %q", why)
	}
	if strings.Contains(text, "task-facts") {
		t.Errorf("the rules leaked into the body: %s", text)
	}
	// The history without its label: the rule that made the model trust it.
	for i, s := range req.Sources {
		if s.ID == "history:unverified" {
			req.Sources[i].Text = strings.Replace(s.Text, ` verified="false"`, "", 1)
		}
	}
	text, h = exchangeRaw(t, base, adapters.OpenAIChat, req, nil)
	if why := strings.Join(session.WhyLines(h), "\n"); !strings.Contains(why, `history-trusted: trusted the history: its part has no verified="false" label`) ||
		!strings.Contains(text, `"max_refund_cents":15000`) {
		t.Fatalf("an unlabelled history: %s\n%s", why, text)
	}
}
