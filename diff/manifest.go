package diff

import (
	"slices"

	"github.com/modelwire/modelwire/store"
)

// KindManifest is a difference in what two sessions were run with (their
// manifests): the model asked for and the one that answered, the client,
// modelwire's and the adapters' versions, and the hashes of the prompt
// template, of each tool and of the output schema. A session-level
// change, listed after the session's own fields.
const KindManifest = "manifest"

// Manifests lists what differs between two sessions' manifests. A field
// one side did not record (a session stored before it was) is not a
// difference; a tool one side has and the other lacks is.
func Manifests(a, b store.Manifest) []Change {
	var out []Change
	for _, f := range []struct{ name, a, b string }{
		{"model", a.Model, b.Model},
		{"model_reported", a.ModelReported, b.ModelReported},
		{"client", a.Client, b.Client},
		{"modelwire_version", a.Version, b.Version},
		{"adapter_version", a.AdapterVersion, b.AdapterVersion},
		{"prompt", a.Hashes["prompt"], b.Hashes["prompt"]},
		{"output_schema", a.Hashes["output_schema"], b.Hashes["output_schema"]},
	} {
		if f.a != "" && f.b != "" && f.a != f.b {
			out = append(out, Change{Kind: KindManifest, Path: f.name, Op: OpChanged, A: f.a, B: f.b})
		}
	}
	if a.ToolHashes == nil || b.ToolHashes == nil {
		// Not both hashed tool by tool: the tools as a whole.
		if ha, hb := a.Hashes["tools"], b.Hashes["tools"]; ha != "" && hb != "" && ha != hb {
			out = append(out, Change{Kind: KindManifest, Path: "tools", Op: OpChanged, A: ha, B: hb})
		}
		return out
	}
	names := append(a.ToolNames(), b.ToolNames()...)
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		ha, inA := a.ToolHashes[name]
		hb, inB := b.ToolHashes[name]
		c := Change{Kind: KindManifest, Path: "tools/" + name, A: ha, B: hb}
		switch {
		case !inA:
			c.Op, c.A = OpAdded, nil
		case !inB:
			c.Op, c.B = OpRemoved, nil
		case ha != hb:
			c.Op = OpChanged
		default:
			continue
		}
		out = append(out, c)
	}
	return out
}
