package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelwire/modelwire/adapters"
)

// Manifest makes a run explainable later and two runs comparable: what
// was asked, of which model, through which protocol and client, with
// which prompt template, tools and output contract, by which modelwire
// and adapter. It is stored as JSON in the session's row (no column of
// its own); fields added since read as empty in older rows, which the
// readers fill from the row's columns where those say the same thing
// (model, protocol, provider, version). The store fills Hashes and
// ToolHashes.
type Manifest struct {
	Parameters     json.RawMessage `json:"parameters,omitempty"`
	Tools          json.RawMessage `json:"tools,omitempty"`
	OutputSchema   json.RawMessage `json:"output_schema,omitempty"`
	AdapterVersion string          `json:"adapter_version,omitempty"`
	// Model is the model asked for; ModelReported the one the provider
	// named in its first response (a snapshot behind an alias), filled
	// when that response arrives.
	Model         string `json:"model,omitempty"`
	ModelReported string `json:"model_reported,omitempty"`
	Protocol      string `json:"protocol,omitempty"`
	Provider      string `json:"provider,omitempty"`
	// Client is what sent the requests: "modelwire/<version>" for a
	// session modelwire ran, an application's User-Agent (its SDK) for a
	// recorded one; "" when unknown.
	Client string `json:"client,omitempty"`
	// Version is the modelwire version that recorded the session.
	Version string `json:"modelwire_version,omitempty"`
	// Hashes are "sha256:<hex>" of the compact JSON of parameters, tools
	// and output_schema, and of the prompt template ("prompt"), so runs
	// with the same inputs can be grouped. The parameters are the run's
	// settings (stream, faults, a fork's edits); prompt, tools and
	// output_schema are its inputs (InputHashes).
	Hashes map[string]string `json:"hashes,omitempty"`
	// ToolHashes hash each tool's declaration (name, description,
	// argument schema) by the tool's name, so a diff names the tool
	// whose schema changed.
	ToolHashes map[string]string `json:"tool_hashes,omitempty"`

	// Prompt is the prompt template the "prompt" hash is made of: a
	// scenario's sources as written (before any value is read from them
	// or filled in), a recorded request's instructions (system and
	// developer texts). It is not stored: the requests carry it. Empty
	// keeps the "prompt" hash given (a manifest restored from an export).
	Prompt []adapters.Source `json:"-"`
	// ToolDefs are the tools as canonical declarations, which ToolHashes
	// are made of (Tools may be in a recorded request's wire shape). Nil
	// keeps the ToolHashes given (a manifest restored from an export).
	ToolDefs []adapters.Tool `json:"-"`
}

// InputHashes are the hashes of what a run is given — the prompt
// template, every tool and the output schema — by name ("prompt",
// "tools", "output_schema", "tool/<name>"): they change when, and only
// when, one of those changes.
func (m Manifest) InputHashes() map[string]string {
	out := map[string]string{}
	for _, k := range []string{"prompt", "tools", "output_schema"} {
		if h := m.Hashes[k]; h != "" {
			out[k] = h
		}
	}
	for name, h := range m.ToolHashes {
		out["tool/"+name] = h
	}
	return out
}

// complete fills what the session's meta says and the manifest leaves
// empty, and the hashes.
func (m Manifest) complete(meta SessionMeta) (Manifest, error) {
	fill := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	fill(&m.Model, meta.Model)
	fill(&m.Protocol, meta.Protocol)
	fill(&m.Provider, meta.Provider)
	fill(&m.Version, meta.Version)
	m.Client = Redact(m.Client)
	return m.withHashes()
}

// withHashes validates the manifest's JSON parts and fills Hashes and
// ToolHashes.
func (m Manifest) withHashes() (Manifest, error) {
	prompt := m.Hashes["prompt"]
	m.Hashes = map[string]string{}
	if prompt != "" {
		m.Hashes["prompt"] = prompt
	}
	for name, raw := range map[string]json.RawMessage{"parameters": m.Parameters, "tools": m.Tools, "output_schema": m.OutputSchema} {
		if len(raw) == 0 {
			continue
		}
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return m, fmt.Errorf("store: manifest %s is not valid JSON: %w", name, err)
		}
		m.Hashes[name] = hashOf(b.Bytes())
	}
	if len(m.Prompt) > 0 {
		b, _ := json.Marshal(m.Prompt)
		m.Hashes["prompt"] = hashOf(b)
	}
	if m.ToolDefs != nil {
		m.ToolHashes = map[string]string{}
	}
	for _, t := range m.ToolDefs {
		if t.Name == "" {
			continue
		}
		var schema bytes.Buffer
		if len(t.Parameters) > 0 && json.Compact(&schema, t.Parameters) == nil {
			t.Parameters = schema.Bytes()
		}
		b, err := json.Marshal(t)
		if err != nil {
			continue
		}
		m.ToolHashes[t.Name] = hashOf(b)
	}
	if len(m.Hashes) == 0 {
		m.Hashes = nil
	}
	if len(m.ToolHashes) == 0 {
		m.ToolHashes = nil
	}
	return m, nil
}

func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// fillFromRow fills, in a manifest read back, what an older row's
// manifest did not record but its columns do.
func (m *Manifest) fillFromRow(s *SessionInfo) {
	for _, f := range []struct {
		dst *string
		v   string
	}{{&m.Model, s.Model}, {&m.ModelReported, s.ModelReported}, {&m.Protocol, s.Protocol}, {&m.Provider, s.Provider}, {&m.Version, s.Version}} {
		if *f.dst == "" {
			*f.dst = f.v
		}
	}
}

// ToolNames are the names ToolHashes has, sorted.
func (m Manifest) ToolNames() []string {
	names := make([]string, 0, len(m.ToolHashes))
	for n := range m.ToolHashes {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
