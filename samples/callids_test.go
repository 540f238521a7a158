package samples

import (
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters/registry"
)

// TestCallIDsFollowTheDescriptor: the refund case's call ids begin as the
// protocol's descriptor says (CallIDPrefix), none where it says calls
// carry no id, and a protocol the registry does not know gets the default
// protocol's.
func TestCallIDsFollowTheDescriptor(t *testing.T) {
	for _, d := range registry.All() {
		callID, itemID := callIDs(d.Name, toolOrder, map[string]bool{})
		if d.CallIDPrefix == "" {
			if callID != "" || itemID != "" {
				t.Errorf("%s: ids %q %q, want none", d.Name, callID, itemID)
			}
			continue
		}
		if callID != d.CallIDPrefix+"order" || itemID != "fc_order" {
			t.Errorf("%s: ids %q %q, want %sorder fc_order", d.Name, callID, itemID, d.CallIDPrefix)
		}
		if again, _ := callIDs(d.Name, toolOrder, map[string]bool{callID: true}); again != callID+"_2" {
			t.Errorf("%s: a repeated call got %q", d.Name, again)
		}
	}
	def, _ := registry.Describe(registry.Default)
	if callID, _ := callIDs("no-such-protocol", toolLedger, nil); !strings.HasPrefix(callID, def.CallIDPrefix) || callID == "" {
		t.Errorf("unknown protocol: %q", callID)
	}
}
