package proxy

import (
	"bytes"
	"net/http"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/store"
)

// Manifest is what an application's request says of its run, for the
// session's manifest: the client that sent it (its User-Agent: the SDK
// and its version), its prompt template (the instructions: system and
// developer texts), its tools as canonical declarations (hashed one by
// one), the tools and output schema as sent, the adapter's version. The
// proxy's sessions, a HAR file's and a fork of either build it here.
func Manifest(protocol, method, path string, h http.Header, body []byte) store.Manifest {
	r := readRequest(protocol, path, body)
	m := store.Manifest{Tools: validJSON(r.tools), OutputSchema: validJSON(r.schema), AdapterVersion: adapters.Version,
		Protocol: protocol, Model: r.model, Client: h.Get("User-Agent"), ToolDefs: []adapters.Tool{}}
	p, err := registry.Lookup(protocol)
	if err != nil {
		return m
	}
	sim, ok := p.(adapters.Simulated)
	if !ok {
		return m
	}
	in, bad := sim.CheckRequest(method, path, h, body)
	if bad != nil || in == nil {
		return m // not a request its provider would take: the hashes of what it sent stay
	}
	for _, part := range in.Prompt {
		if part.Role == adapters.RoleSystem || part.Role == adapters.RoleDeveloper {
			m.Prompt = append(m.Prompt, adapters.Source{Role: part.Role, Text: strings.Clone(part.Text)})
		}
	}
	for _, t := range in.ToolDefs { // the body's memory: copied
		t.Name, t.Description, t.Parameters = strings.Clone(t.Name), strings.Clone(t.Description), bytes.Clone(t.Parameters)
		m.ToolDefs = append(m.ToolDefs, t)
	}
	return m
}
