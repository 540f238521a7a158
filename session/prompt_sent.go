package session

import (
	"net/http"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
)

// promptSent is the prompt the session's requests gave the model, read
// from the wire as the simulator reads it (the protocol's own request
// check), so the checks see what the model saw — a fork's edited body
// included. It is the first request that carries a prompt (a chained
// Responses request carries only its results); the scenario's sources
// when none can be read.
func (s *Session) promptSent(reqs []*adapters.HTTPRequest) Prompt {
	return PromptFrom(s.cfg.Protocol, reqs, func() *adapters.Request { return s.Request(nil) })
}

// PromptFrom reads the prompt from requests of a protocol, as promptSent
// does, or from the request fallback gives when none can be read.
func PromptFrom(protocol string, reqs []*adapters.HTTPRequest, fallback func() *adapters.Request) Prompt {
	if p, err := registry.Lookup(protocol); err == nil {
		if simp, ok := p.(adapters.Simulated); ok {
			for _, r := range reqs {
				if r == nil {
					continue
				}
				if in, serr := simp.CheckRequest(r.Method, r.Path, header(r.Headers), r.Body); serr == nil && len(in.Prompt) > 0 {
					return in.Prompt
				}
			}
		}
	}
	return PromptOf(fallback())
}

func header(m map[string]string) http.Header {
	h := make(http.Header, len(m))
	for k, v := range m {
		h.Set(k, v)
	}
	return h
}
