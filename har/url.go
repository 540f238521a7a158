package har

import (
	"net/url"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
)

// What a HAR entry's URL says of the exchange: the protocol by its path
// (a gateway may put a prefix before it), the provider by its host.

func protocolOf(u *url.URL) (adapters.Descriptor, bool) {
	trimmed := *u
	trimmed.Path = strings.TrimRight(u.Path, "/")
	return registry.RouteURL(&trimmed)
}

// providerOfHost is the provider whose own domain host is in (a
// protocol's Endpoint.Host, e.g. openai.com), else compatible.
func providerOfHost(host string) string {
	for _, d := range registry.All() {
		if own, err := url.Parse(d.Endpoint.Host); err == nil && strings.HasSuffix(host, domainOf(own.Hostname())) {
			return d.Provider
		}
	}
	return adapters.ProviderCompatible
}

// domainOf is a hostname's last two labels (api.openai.com → openai.com).
func domainOf(host string) string {
	labels := strings.Split(host, ".")
	if len(labels) <= 2 {
		return host
	}
	return strings.Join(labels[len(labels)-2:], ".")
}
