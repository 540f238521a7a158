package cli

import (
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
)

// TestProtocolOfRoutesEveryProtocol: an assembled request's protocol (for
// its key header) is the one its path is routed to, query aside; a path
// no protocol claims is the default protocol's.
func TestProtocolOfRoutesEveryProtocol(t *testing.T) {
	for _, d := range registry.All() {
		path := strings.ReplaceAll(d.Endpoint.Paths[0], "{model}", "m") + "?alt=sse"
		if got := protocolOf(&adapters.HTTPRequest{Method: "POST", Path: path}); got != d.Name {
			t.Errorf("%s: protocolOf(%s) = %s", d.Name, path, got)
		}
	}
	if got := protocolOf(&adapters.HTTPRequest{Method: "POST", Path: "/elsewhere"}); got != registry.Default {
		t.Errorf("an unclaimed path: %s, want %s", got, registry.Default)
	}
}
