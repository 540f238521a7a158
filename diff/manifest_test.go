package diff

import (
	"testing"

	"github.com/modelwire/modelwire/store"
)

// TestManifests: the differences name the models, the client, the
// versions and each hash that differs (a tool by its name); a field one
// side never recorded is no difference.
func TestManifests(t *testing.T) {
	a := store.Manifest{Model: "m", ModelReported: "m-2026-01", Client: "modelwire/1", Version: "1", AdapterVersion: "1",
		Hashes:     map[string]string{"prompt": "p1", "output_schema": "o1", "tools": "t1"},
		ToolHashes: map[string]string{"get_order_line": "g1", "get_refund_policy": "r1"}}
	if got := Manifests(a, a); len(got) != 0 {
		t.Errorf("a manifest against itself: %+v", got)
	}
	b := a
	b.ModelReported, b.Client = "m-2026-02", "openai-python/1.2"
	b.Hashes = map[string]string{"prompt": "p2", "output_schema": "o1", "tools": "t2"}
	b.ToolHashes = map[string]string{"get_order_line": "g2", "get_refund_ledger": "l1"}
	want := []string{"model_reported", "client", "prompt", "tools/get_order_line", "tools/get_refund_ledger", "tools/get_refund_policy"}
	got := Manifests(a, b)
	if len(got) != len(want) {
		t.Fatalf("changes %+v, want paths %v", got, want)
	}
	for i, c := range got {
		if c.Kind != KindManifest || c.Path != want[i] || c.Group() != "manifest" {
			t.Errorf("change %d: %+v, want %s", i, c, want[i])
		}
	}
	if got[4].Op != OpAdded || got[5].Op != OpRemoved || got[3].Op != OpChanged {
		t.Errorf("ops %+v", got[3:])
	}
	old := store.Manifest{Hashes: map[string]string{"tools": "t1"}} // a row recorded before
	if got := Manifests(old, b); len(got) != 1 || got[0].Path != "tools" {
		t.Errorf("against an older manifest: %+v", got)
	}
}
