package sim_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/sim"
)

// The simulator reads what differs between protocols from their
// descriptors; these tests go through every registered protocol, so a
// new one is checked by its registration alone.

// modelsHeader is what a GET on d's models path needs to be d's.
func modelsHeader(d adapters.Descriptor) map[string]string {
	if d.Models.Header == "" {
		return nil
	}
	return map[string]string{d.Models.Header: "2023-06-01"}
}

// TestModelsEveryProtocol: each protocol's models endpoint lists the
// scenario's model in its Shape, answers it alone, and answers an unknown
// one with its NotFound message; a ':' in the id is a method only where
// the endpoint says Methods.
func TestModelsEveryProtocol(t *testing.T) {
	base := start(t, "", sim.Options{})
	for _, d := range registry.All() {
		t.Run(d.Name, func(t *testing.T) {
			m, h := d.Models, modelsHeader(d)
			picked, id, ok := registry.ModelsRoute(http.MethodGet, m.Path, http.Header{})
			if h != nil {
				picked, id, ok = registry.ModelsRoute(http.MethodGet, m.Path, http.Header{http.CanonicalHeaderKey(m.Header): {"x"}})
			}
			pm := picked.Models
			pm.Defers, m.Defers = false, false
			if !ok || id != "" || pm != m {
				t.Fatalf("GET %s is %q's (%+v), whose facts differ from %+v", d.Models.Path, picked.Name, picked.Models, d.Models)
			}
			r := do(t, "GET", base+m.Path, h, "")
			var v map[string]any
			if err := json.Unmarshal([]byte(r.body), &v); err != nil || r.status != 200 {
				t.Fatalf("list: %d %s", r.status, r.body)
			}
			list := "data"
			if m.Shape == adapters.ModelsShapeGemini {
				list = "models"
			}
			one := first(v[list])
			if len(one) == 0 {
				t.Fatalf("list has no %s: %s", list, r.body)
			}
			if m.Shape == adapters.ModelsShapeOpenAI {
				_, created := one["created"]
				if one["owned_by"] != m.OwnedBy || created != m.Created {
					t.Errorf("model %v: want owned_by %q, created %v", one, m.OwnedBy, m.Created)
				}
			}
			if r := do(t, "GET", base+m.Path+"/refund-model", h, ""); r.status != 200 || !strings.Contains(r.body, "refund-model") {
				t.Errorf("get one: %d %s", r.status, r.body)
			}
			r = do(t, "GET", base+m.Path+"/no-such-model", h, "")
			msg := strings.NewReplacer("{id}", "no-such-model", "{model}", "no-such-model").Replace(m.NotFound)
			if r.status != 404 || m.NotFound == "" || !strings.Contains(r.body, msg) {
				t.Errorf("get unknown: %d %s, want the message %q", r.status, r.body, msg)
			}
			r = do(t, "GET", base+m.Path+"/ft:m:org::x1", h, "")
			if unknown := strings.Contains(r.body, "unknown_url"); r.status != 404 || unknown != m.Methods {
				t.Errorf("get an id with ':' (Methods %v): %d %s", m.Methods, r.status, r.body)
			}
		})
	}
}

// TestCountEveryProtocol: each protocol with a count endpoint answers its
// Answer field, and a request without any of its Needs its Missing 400.
func TestCountEveryProtocol(t *testing.T) {
	base := start(t, "", sim.Options{})
	n := 0
	for _, d := range registry.All() {
		c := d.Count
		if c == nil {
			continue
		}
		n++
		t.Run(d.Name, func(t *testing.T) {
			path := strings.ReplaceAll(c.Path, "{model}", "refund-model")
			if got, ok := registry.CountRoute(http.MethodPost, path); !ok || got.Name != d.Name {
				t.Fatalf("POST %s is %q's count endpoint", path, got.Name)
			}
			for _, need := range c.Needs {
				r := do(t, "POST", base+path, nil, `{"model":"refund-model","`+need+`":[{"role":"user","content":"hi"}]}`)
				var v map[string]any
				if err := json.Unmarshal([]byte(r.body), &v); err != nil || r.status != 200 {
					t.Fatalf("with %s: %d %s", need, r.status, r.body)
				}
				if n, ok := v[c.Answer].(float64); !ok || n <= 0 || len(v) != 1 {
					t.Errorf("with %s: %s, want {%q: N}", need, r.body, c.Answer)
				}
			}
			r := do(t, "POST", base+path, nil, `{"model":"refund-model"}`)
			if r.status != 400 || c.Missing == "" || !strings.Contains(r.body, c.Missing) {
				t.Errorf("without %v: %d %s, want %q", c.Needs, r.status, r.body, c.Missing)
			}
			r = do(t, "POST", base+path, nil, `{"model":"refund-model","`+c.Needs[0]+`":"text"}`)
			if (r.status == 400) != c.NeedsList {
				t.Errorf("%s as text (NeedsList %v): %d %s", c.Needs[0], c.NeedsList, r.status, r.body)
			}
		})
	}
	if n == 0 {
		t.Fatal("no protocol has a count endpoint")
	}
}

// TestEveryPathIsServed: a POST to each of a protocol's paths is answered
// by a protocol, not as an unknown URL.
func TestEveryPathIsServed(t *testing.T) {
	base := start(t, "", sim.Options{})
	for _, d := range registry.All() {
		for _, p := range d.Endpoint.Paths {
			path := strings.ReplaceAll(p, "{model}", "refund-model")
			if r := do(t, "POST", base+path, nil, `{}`); strings.Contains(r.body, "unknown_url") {
				t.Errorf("%s: POST %s: %d %s", d.Name, path, r.status, r.body)
			}
		}
	}
	// An unknown URL's 404 lists every path, so a person sees where to go.
	r := do(t, "POST", base+"/v9/nowhere", nil, `{}`)
	for _, d := range registry.All() {
		for _, p := range append([]string{d.Models.Path}, d.Endpoint.Paths...) {
			if r.status != 404 || !strings.Contains(r.body, p) {
				t.Errorf("the 404 for an unknown URL does not name %s's %s: %d %s", d.Name, p, r.status, r.body)
			}
		}
	}
}

// TestProviderFaultsEveryProtocol: a provider-only fault fires on the
// protocols whose descriptor Raises it and waits on the others.
func TestProviderFaultsEveryProtocol(t *testing.T) {
	for _, d := range registry.All() {
		t.Run(d.Name, func(t *testing.T) {
			base := start(t, "overloaded:always", sim.Options{})
			ex := send(t, base, d.Name, "", false)
			if (ex.status == 529) != d.Raises("overloaded") {
				t.Errorf("overloaded (Raises %v): status %d", d.Raises("overloaded"), ex.status)
			}
			base = start(t, "pause-turn:always", sim.Options{})
			ex = send(t, base, d.Name, "", false)
			if ex.status != 200 || (ex.sum.StopReason == adapters.StopPause) != d.Raises("pause-turn") {
				t.Errorf("pause-turn (Raises %v): status %d, stop %q", d.Raises("pause-turn"), ex.status, ex.sum.StopReason)
			}
		})
	}
}

var sseID = regexp.MustCompile(`(?m)^id:`)

// TestStreamFramingEveryProtocol: duplicated events carry SSE ids where
// the descriptor says SSEIDs, and a stream asked for by path is one JSON
// array unless the query has ArrayUnless.
func TestStreamFramingEveryProtocol(t *testing.T) {
	sc, _ := samples.Lookup("refund")
	for _, d := range registry.All() {
		t.Run(d.Name, func(t *testing.T) {
			wr, err := d.New().Encode(sc.Request(true, adapters.HistoryFull), adapters.ProviderSim)
			if err != nil {
				t.Fatal(err)
			}
			path, _, _ := strings.Cut(wr.Path, "?")
			if d.Endpoint.ArrayUnless != "" {
				r := postWire(t, start(t, "", sim.Options{}), path, wr)
				if !strings.HasPrefix(r.body, "[") || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
					t.Errorf("without %s: %s %.40q", d.Endpoint.ArrayUnless, r.header.Get("Content-Type"), r.body)
				}
				path += "?" + d.Endpoint.ArrayUnless
			}
			plain := postWire(t, start(t, "", sim.Options{}), path, wr)
			dup := postWire(t, start(t, "duplicate-events", sim.Options{}), path, wr)
			if !strings.HasPrefix(plain.header.Get("Content-Type"), "text/event-stream") || len(dup.body) <= len(plain.body) {
				t.Fatalf("streams: %s %d, %d bytes", plain.header.Get("Content-Type"), len(plain.body), len(dup.body))
			}
			ids := len(sseID.FindAllString(dup.body, -1)) > len(sseID.FindAllString(plain.body, -1))
			if ids != d.Endpoint.SSEIDs {
				t.Errorf("duplicates got SSE ids: %v, SSEIDs %v", ids, d.Endpoint.SSEIDs)
			}
		})
	}
}

// postWire sends an encoded request's body and headers to path.
func postWire(t *testing.T, base, path string, wr *adapters.HTTPRequest) raw {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(wr.Body))
	for k, v := range wr.Headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return raw{resp.StatusCode, resp.Header, b.String()}
}
