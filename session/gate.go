package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelwire/modelwire/jsonschema"
	"github.com/modelwire/modelwire/store"
)

// Policy says who decides tool proposals.
type Policy string

// Approval policies.
const (
	PolicyManual Policy = "manual" // a person decides each call
	PolicyAuto   Policy = "auto"   // approve calls whose arguments pass their schema
	PolicyReject Policy = "reject" // reject every call
)

// ParsePolicy reads a policy name.
func ParsePolicy(s string) (Policy, error) {
	switch Policy(s) {
	case PolicyManual, PolicyAuto, PolicyReject:
		return Policy(s), nil
	}
	return "", fmt.Errorf("unknown approval policy %q (want auto, reject or manual)", s)
}

// DecisionKind is what was decided about a proposal: the store's kinds,
// which the timeline keeps.
type DecisionKind = store.DecisionKind

// Decision kinds, as the contract names them (the store's).
const (
	Approved = store.DecisionApproved
	Edited   = store.DecisionEdited
	Rejected = store.DecisionRejected
)

// Proposal is a closed, parsed tool call waiting for a decision.
type Proposal struct {
	Turn      int             `json:"turn"`
	Index     int             `json:"index"` // position among this turn's proposals
	Of        int             `json:"of"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// Known is false for a tool the scenario does not define.
	Known bool `json:"known"`
	// Violations are the argument schema failures (empty when valid).
	Violations []jsonschema.Violation `json:"violations,omitempty"`
	// EditError is set when a previous edit was refused, so the decider
	// can ask again and say why.
	EditError string `json:"edit_error,omitempty"`
	// NoEdit: the decider may approve or reject only (the proxy's hold
	// passes a response on unchanged or replaces it with an error).
	NoEdit bool `json:"no_edit,omitempty"`
}

// EditUnavailable is what a decider says when an edit is asked of a
// proposal that cannot be edited.
const EditUnavailable = "editing the arguments is not available here: approve or reject"

// Valid reports whether the proposal may run as proposed.
func (p Proposal) Valid() bool { return p.Known && len(p.Violations) == 0 }

// Decision is what a person (or a policy) decided about a proposal.
type Decision struct {
	Kind DecisionKind `json:"decision"`
	// Arguments are the edited arguments (Edited only).
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Reason    string          `json:"reason,omitempty"`
	// By is "person" or the policy that decided.
	By string `json:"by"`
}

// Decider asks for decisions. It is called once per proposal, in call
// order; it blocks until the decision is made or ctx ends.
type Decider interface {
	Decide(ctx context.Context, p Proposal) (Decision, error)
}

// DeciderFunc adapts a function to Decider.
type DeciderFunc func(ctx context.Context, p Proposal) (Decision, error)

// Decide calls f.
func (f DeciderFunc) Decide(ctx context.Context, p Proposal) (Decision, error) { return f(ctx, p) }

// ErrNoDecider is returned when the manual policy has no one to ask.
var ErrNoDecider = errors.New("manual approval needs a terminal: pass --approve auto (or reject)")

// check runs the gate's checks on a proposal: the tool is known and its
// arguments pass the tool's schema.
func (sc *Scenario) check(p *Proposal) {
	s := sc.ToolSchema(p.Name)
	p.Known = s != nil
	if s != nil {
		p.Violations = s.Validate(p.Arguments)
	}
}

// policyDecision decides without a person, or returns false for manual.
func policyDecision(policy Policy, p Proposal) (Decision, bool) {
	switch policy {
	case PolicyAuto:
		if !p.Known {
			return Decision{Kind: Rejected, Reason: fmt.Sprintf("unknown tool %q", p.Name), By: "auto"}, true
		}
		if len(p.Violations) > 0 {
			return Decision{Kind: Rejected, Reason: "arguments fail the tool's schema: " + jsonschema.Joined(p.Violations), By: "auto"}, true
		}
		return Decision{Kind: Approved, By: "auto"}, true
	case PolicyReject:
		return Decision{Kind: Rejected, Reason: "rejected by policy", By: "reject"}, true
	}
	return Decision{}, false
}

// CheckEdit validates edited arguments: they must be one JSON object that
// passes the tool's schema. It returns them compacted.
func (sc *Scenario) CheckEdit(name string, edited []byte) (json.RawMessage, error) {
	t := bytes.TrimSpace(edited)
	if !json.Valid(t) {
		var v any
		err := json.Unmarshal(t, &v)
		return nil, fmt.Errorf("edited arguments are not valid JSON: %v", err)
	}
	if len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("edited arguments must be a JSON object")
	}
	if s := sc.ToolSchema(name); s != nil {
		if vs := s.Validate(t); vs != nil {
			return nil, fmt.Errorf("edited arguments fail the schema of %s: %s", name, jsonschema.Joined(vs))
		}
	}
	var b bytes.Buffer
	_ = json.Compact(&b, t)
	return b.Bytes(), nil
}
