// Package registry lists every wire-format adapter by its descriptor, so
// commands look a protocol up — by name, by the path a request came to,
// by its token-count or models endpoint — without importing each adapter
// or naming one.
package registry

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/anthropic"
	"github.com/modelwire/modelwire/adapters/claudecode"
	"github.com/modelwire/modelwire/adapters/gemini"
	"github.com/modelwire/modelwire/adapters/geminiinteractions"
	"github.com/modelwire/modelwire/adapters/openaichat"
	"github.com/modelwire/modelwire/adapters/openairesponses"
)

// descriptors are the protocols that send requests, in the order the UI
// shows them: adding a protocol is one line here.
var descriptors = []adapters.Descriptor{
	openairesponses.Descriptor,
	openaichat.Descriptor,
	anthropic.Descriptor,
	gemini.Descriptor,
	geminiinteractions.Descriptor,
	openaichat.DeepSeekDescriptor,
}

// Protocols are the protocols' names, in the order the UI shows them.
var Protocols = names()

// Default is the protocol used when none is named: the first.
var Default = descriptors[0].Name

func names() []string {
	out := make([]string, len(descriptors))
	for i, d := range descriptors {
		out[i] = d.Name
	}
	return out
}

// All are the descriptors, in the order the UI shows them.
func All() []adapters.Descriptor { return descriptors }

// Describe is a protocol's descriptor; ok is false for an unknown name
// or claude-code, which sends no requests.
func Describe(name string) (adapters.Descriptor, bool) {
	for _, d := range descriptors {
		if d.Name == name {
			return d, true
		}
	}
	return adapters.Descriptor{}, false
}

// Lookup returns the adapter for a protocol name. claude-code is accepted
// too; it can only decode.
func Lookup(name string) (adapters.Protocol, error) {
	if d, ok := Describe(name); ok {
		return d.New(), nil
	}
	if name == adapters.ClaudeCode {
		return claudecode.New(), nil
	}
	return nil, fmt.Errorf("unknown protocol %q (want %s or %s)", name, strings.Join(Protocols, ", "), adapters.ClaudeCode)
}

// Route names the protocol spoken at a POST to path, as a server receives
// it (the simulator, the proxy). host (may be "") settles a path two
// protocols share: a protocol whose HostHint is in it takes the path,
// else the one with no hint.
func Route(method, path, host string) (adapters.Descriptor, bool) {
	if method != http.MethodPost {
		return adapters.Descriptor{}, false
	}
	return match(path, host, false)
}

// RouteURL names the protocol of a request URL whose base may carry a
// path of its own (a HAR's entries): the path is matched at its end.
func RouteURL(u *url.URL) (adapters.Descriptor, bool) {
	return match(u.Path, u.Hostname(), true)
}

func match(path, host string, suffix bool) (adapters.Descriptor, bool) {
	best, bestScore := -1, -1
	for i, d := range descriptors {
		for _, p := range d.Endpoint.Paths {
			if !adapters.MatchPath(p, path, suffix) {
				continue
			}
			score := len(p)
			switch {
			case d.Endpoint.HostHint == "":
				score += 1000
			case host != "" && strings.Contains(host, d.Endpoint.HostHint):
				score += 2000
			}
			if score > bestScore {
				best, bestScore = i, score
			}
		}
	}
	if best < 0 {
		return adapters.Descriptor{}, false
	}
	return descriptors[best], true
}

// CountRoute names the protocol whose token-count endpoint a POST to
// path is.
func CountRoute(method, path string) (adapters.Descriptor, bool) {
	if method != http.MethodPost {
		return adapters.Descriptor{}, false
	}
	for _, d := range descriptors {
		if d.Count != nil && adapters.MatchPath(d.Count.Path, path, false) {
			return d, true
		}
	}
	return adapters.Descriptor{}, false
}

// ModelsRoute names the protocol whose models endpoint a GET to path is,
// and the model id the path names ("" for the list). A protocol that
// needs a header to claim its path comes before one that does not, and
// one that Defers after the others.
func ModelsRoute(method, path string, h http.Header) (d adapters.Descriptor, id string, ok bool) {
	if method != http.MethodGet {
		return adapters.Descriptor{}, "", false
	}
	found := -1
	rank := func(m adapters.ModelsEndpoint) int {
		switch {
		case m.Header != "":
			return 2
		case m.Defers:
			return 0
		}
		return 1
	}
	for i, c := range descriptors {
		m := c.Models
		if m.Path == "" || (m.Header != "" && h.Get(m.Header) == "") {
			continue
		}
		rest, under := strings.CutPrefix(path, m.Path)
		if !under || (rest != "" && (rest[0] != '/' || (m.Methods && strings.Contains(rest, ":")))) {
			continue
		}
		if found < 0 || rank(m) > rank(descriptors[found].Models) {
			found, id = i, strings.TrimPrefix(rest, "/")
		}
	}
	if found < 0 {
		return adapters.Descriptor{}, "", false
	}
	return descriptors[found], id, true
}

// OfProvider are the protocols whose API is provider's.
func OfProvider(provider string) []adapters.Descriptor {
	var out []adapters.Descriptor
	for _, d := range descriptors {
		if d.Provider == provider {
			out = append(out, d)
		}
	}
	return out
}

// BatchRoute names a protocol whose provider's batch API path is under
// (its files or batches collection, or an item of one): the descriptor
// carries the BatchEndpoint.
func BatchRoute(path string) (adapters.Descriptor, bool) {
	for _, d := range descriptors {
		if b := d.Batch; b != nil {
			for _, root := range []string{b.Files, b.Batches} {
				if path == root || strings.HasPrefix(path, root+"/") {
					return d, true
				}
			}
		}
	}
	return adapters.Descriptor{}, false
}
