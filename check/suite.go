package check

// Probe is one session of the capability suite: a scenario the target
// is asked with, the simulator's faults that make it exercise one
// capability, and what "handled" means. A probe passes when its
// capability's mark on the session is pass: the condition came up (the
// target truncated, refused, repeated an event…) and was handled.
type Probe struct {
	Name       string     `json:"name"`
	Capability Capability `json:"capability"`
	Scenario   string     `json:"scenario"`
	// Faults are the simulator's (ignored against a real provider, which
	// is judged on what it does).
	Faults []string `json:"faults,omitempty"`
	// Regenerate lets the engine ask again after a failed layer; probes
	// of a rejected answer keep it off, so the rejection is what ends.
	Regenerate bool `json:"regenerate"`
	// MaxOutputTokens, when set, limits each response (how a real
	// provider is made to truncate; the simulator honours it too).
	MaxOutputTokens int `json:"max_output_tokens,omitempty"`
	// Reasoning asks for reasoning ("low", "medium", "high"; "" asks none).
	Reasoning string `json:"reasoning,omitempty"`
	Handled   string `json:"handled"`
	// PlantFaults and PlantScenario stand in for a target that breaks
	// the capability (its faults instead of the probe's, its scenario
	// when set), for the suite's own test: the probe must fail.
	PlantFaults   []string `json:"-"`
	PlantScenario string   `json:"-"`
	// PlantLimitOff drops MaxOutputTokens.
	PlantLimitOff bool `json:"-"`
	// PlantReasoning asks for no reasoning.
	PlantReasoning bool `json:"-"`
}

// Probes are the built-in capability suite (the chapter's 13.7.5).
var Probes = []Probe{
	{Name: "tool-calls", Capability: ToolCallIDs, Scenario: "refund", Regenerate: true,
		Handled:     "every proposed call has its own call_id and every result goes back under the call_id it answers",
		PlantFaults: []string{"disconnect-mid-args:always"}}, // no call ever closes
	{Name: "parallel-calls", Capability: ParallelCalls, Scenario: "refund", Regenerate: true,
		Handled:       "the calls proposed together each get their own result, correlated by call_id",
		PlantScenario: "refund/sequential"}, // one call a turn
	{Name: "structured-output", Capability: StructuredOutput, Scenario: "refund", Regenerate: false,
		Handled:       "the final answer is exactly one JSON object that the output schema accepts",
		PlantScenario: "refund/fenced"}, // JSON in a markdown fence
	{Name: "refusal", Capability: RefusalShown, Scenario: "refund/refusal",
		Handled:       "a request the rules forbid is refused, the refusal arrives as one (its status, stop reason or text), and it is never taken for an answer",
		PlantScenario: "refund"}, // the model complies
	{Name: "truncation", Capability: TruncationShown, Scenario: "refund", MaxOutputTokens: 16,
		Handled:     "a response cut at max tokens surfaces as incomplete (truncated), not as an answer",
		PlantFaults: []string{"disconnect-mid-text:always"}, PlantLimitOff: true}, // cut, never marked truncated
	{Name: "empty-content", Capability: EmptyShown, Scenario: "refund", Faults: []string{"content-filter:always"},
		Handled:     "a response that completes with no content is rejected, not taken for an empty answer",
		PlantFaults: []string{"refusal:always"}}, // content, a refusal's
	{Name: "usage", Capability: UsagePresent, Scenario: "refund", Regenerate: true,
		Handled:     "every completed response reports its input and output tokens (else cost is unknown, never zero)",
		PlantFaults: []string{"no-terminal:always"}}, // no response completes with its usage
	{Name: "reasoning", Capability: ReasoningHandled, Scenario: "refund", Reasoning: "medium", Regenerate: true,
		Handled:        "reasoning asked for arrives apart from the answer: never in its text, and the answer still parses",
		PlantReasoning: true}, // reasoning not asked: it never comes
	{Name: "cut-stream", Capability: CutStreamShown, Scenario: "refund", Faults: []string{"disconnect-mid-text:always"},
		Handled:     "a stream that breaks off is retried or fails the turn, never read as the whole answer",
		PlantFaults: []string{"truncate:always"}}, // ends, never cut
	{Name: "duplicate-events", Capability: DuplicatesDropped, Scenario: "refund", Faults: []string{"duplicate-events:always"}, Regenerate: true,
		Handled:     "events sent twice are dropped (a duplicate_event diagnostic) and the answer still passes every layer",
		PlantFaults: []string{"duplicate-events:always"}, PlantScenario: "refund/wrong-cap"}, // the answer fails
	{Name: "unknown-events", Capability: UnknownSkipped, Scenario: "refund", Faults: []string{"unknown-event:always"}, Regenerate: true,
		Handled:     "an event type the protocol does not define is skipped (an unknown_event diagnostic) and the answer still passes",
		PlantFaults: []string{"unknown-event:always"}, PlantScenario: "refund/wrong-cap"}, // the answer fails
}

// Prove is a probe's cell: pass when the probe's capability passed,
// regressed ("probe:CAPABILITY") when it failed or never came up.
func Prove(p Probe, target string, got *Profile) Cell {
	c := Cell{Type: "cell", Session: p.Name, Target: target, Proves: p.Capability, Regressions: []string{}}
	c.fill(got)
	if got.Capabilities[p.Capability] != Pass {
		c.Regressions = append(c.Regressions, "probe:"+string(p.Capability))
		if got.Capabilities[p.Capability] == NA {
			c.Error = string(p.Capability) + " never came up: the target did not show the condition the probe raises"
		}
	}
	c.Regressed = len(c.Regressions) > 0
	// The cell's status is the probe's; the session's own verdict (a
	// handled refusal fails the protocol layer) stays in failed_layer.
	c.SessionVerdict, c.Status = c.Status, "pass"
	if c.Regressed {
		c.Status = "fail"
	}
	return c
}

// Skipped is the cell of a probe the target cannot show (reasoning on a
// protocol that never returns it): status n/a, not a regression.
func Skipped(p Probe, target, why string) Cell {
	return Cell{Type: "cell", Session: p.Name, Target: target, Proves: p.Capability, Status: string(NA), Regressions: []string{}, Error: why}
}
