//go:build sdkbench

package bench

import (
	"testing"

	"github.com/modelwire/modelwire/adapters/registry"
)

// TestEverySDKGoHasAReference: a descriptor that names an official Go SDK
// call is measured against it, so the name must be one sdkRefs knows.
func TestEverySDKGoHasAReference(t *testing.T) {
	for _, d := range registry.All() {
		if d.SDK.Go == "" {
			continue
		}
		if ref := sdkFor(d.Name); ref.run == nil {
			t.Errorf("%s: SDK.Go %q has no reference in sdkRefs", d.Name, d.SDK.Go)
		}
	}
}
