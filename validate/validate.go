// Package validate owns modelwire's validation pipeline: the five layers
// (transport, protocol, parse, schema, domain), in order, and the one
// function that judges them, Judge. Every verdict modelwire gives — a
// scenario's run, the workbench, a fork, the proxy's exchanges, a VCR
// replay's recorded verdicts — has the types named here.
//
// A failure names its layer, so a person knows whether to fix the
// transport, the protocol handling, the prompt, the schema or the
// business rule. A layer that could not be judged is skipped and says
// why: never a pass.
//
// validate imports the canonical model (adapters), the schema validator
// (jsonschema) and the store, for the verdict type the store keeps;
// nothing above them. The business checks belong to the caller: the
// domain layer runs a function it passes.
package validate

import (
	"fmt"

	"github.com/modelwire/modelwire/store"
)

// Layer names one validation layer.
type Layer string

// The five validation layers, in order.
const (
	Transport Layer = "transport"
	Protocol  Layer = "protocol"
	Parse     Layer = "parse"
	Schema    Layer = "schema"
	Domain    Layer = "domain"
)

// Layers lists the layers in order.
var Layers = []Layer{Transport, Protocol, Parse, Schema, Domain}

// Verdict is a layer's outcome. The store keeps verdicts as they are.
type Verdict = store.Verdict

// The verdicts.
const (
	Pass = store.VerdictPass
	Fail = store.VerdictFail
	Skip = store.VerdictSkip
)

// LayerResult is one layer's verdict.
type LayerResult struct {
	Layer  Layer   `json:"layer"`
	Status Verdict `json:"status"`
	Detail string  `json:"detail"`
}

// Stored is the verdict as the store keeps it.
func (r LayerResult) Stored() store.Validation {
	return store.Validation{Layer: string(r.Layer), Status: r.Status, Detail: r.Detail}
}

// FromStored is a stored verdict as a LayerResult.
func FromStored(v store.Validation) LayerResult {
	return LayerResult{Layer: Layer(v.Layer), Status: v.Status, Detail: v.Detail}
}

// Find returns the named layer's verdict among layers.
func Find(layers []LayerResult, l Layer) (LayerResult, bool) {
	for _, r := range layers {
		if r.Layer == l {
			return r, true
		}
	}
	return LayerResult{}, false
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func notJudged(because Layer) string {
	return fmt.Sprintf("not judged: the %s layer failed", because)
}
