package sim_test

// The official Go SDK's Interactions client (google.golang.org/genai
// v1.77.0, package interactions) drives the whole refund loop against a
// real sim.Server: with the history sent back as steps and chained by
// previous_interaction_id, streaming and not, for every refund variant;
// what it collects each turn must be the turn the variant's model gives. The server's chain checks are driven through the SDK
// too: an unknown previous_interaction_id and a function_result answering
// no call of the interaction it continues get the API's errors.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/genai"
	"google.golang.org/genai/interactions/models/apierrors"
	gi "google.golang.org/genai/interactions/models/interactions"
	"google.golang.org/genai/interactions/models/operations"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/sim"
)

func startInteractions(t *testing.T, sc *session.Scenario) *genai.Client {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	base, err := sim.New(sim.Options{Scenario: sc}).Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "any", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: base}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ptr[T any](v T) *T { return &v }

func jsonMap(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func textContent(s string) gi.Content { return gi.NewContent(gi.TextContent{Text: s}) }

// interactionParams is the refund case's first request as an SDK user
// writes it: the rules as system_instruction, the task as input, the tools
// and the output schema.
func interactionParams(t *testing.T, sc *session.Scenario) gi.CreateModelInteraction {
	t.Helper()
	system, task := systemAndTask(sc)
	p := gi.CreateModelInteraction{
		Model:             gi.Model(sc.Model),
		SystemInstruction: ptr(system),
		Input:             ptr(gi.NewInteractionsInput([]gi.Step{gi.NewStep(gi.UserInputStep{Content: []gi.Content{textContent(task)}})})),
		GenerationConfig:  &gi.GenerationConfig{MaxOutputTokens: ptr(2048)},
	}
	for _, tool := range sc.Tools {
		p.Tools = append(p.Tools, gi.NewTool(gi.Function{Name: ptr(tool.Name), Description: ptr(tool.Description), Parameters: jsonMap(t, tool.Parameters)}))
	}
	if o := sc.Output.Sent(); o.Mode == adapters.OutputJSONSchema {
		mime := gi.TextResponseFormatMimeTypeApplicationJSON
		p.ResponseFormat = ptr(gi.NewCreateModelInteractionResponseFormat(gi.NewResponseFormat(gi.TextResponseFormat{MimeType: &mime, Schema: jsonMap(t, o.Schema)})))
	}
	return p
}

// sdkInteraction is what the SDK user has after one request.
type sdkInteraction struct {
	id, status      string
	text, reasoning string
	signatures      int
	calls           []gi.FunctionCallStep
	steps           []gi.Step // the output steps, to send back as history
	usage           *gi.Usage
}

// createInteraction sends one request; a stream is gathered step by step
// as the SDK's streaming docs show (the completed event carries no steps).
func createInteraction(ctx context.Context, c *genai.Client, p gi.CreateModelInteraction, stream bool) (sdkInteraction, error) {
	var out sdkInteraction
	p.Stream = ptr(stream)
	res, err := c.Interactions.Create(ctx, operations.CreateInteractionRequest{Body: operations.NewCreateInteractionRequestBody(p)})
	if err != nil {
		return out, err
	}
	if !stream {
		it := res.Interaction
		out.id, out.status, out.usage, out.steps = *it.ID, string(it.Status), it.Usage, it.Steps
		for _, s := range it.Steps {
			out.add(s)
		}
		return out, nil
	}
	es := res.InteractionSSEStreamEvent
	defer es.Close()
	type building struct {
		step gi.Step
		text string
		args string
	}
	var steps []*building
	byIndex := map[int]*building{}
	for es.Next() {
		ev := es.Value()
		switch {
		case ev.GetDataInteractionCreated() != nil:
			out.id = ev.GetDataInteractionCreated().Interaction.ID
		case ev.GetDataStepStart() != nil:
			b := &building{step: ev.GetDataStepStart().Step}
			byIndex[ev.GetDataStepStart().Index] = b
			steps = append(steps, b)
		case ev.GetDataStepDelta() != nil:
			d := ev.GetDataStepDelta()
			b := byIndex[d.Index]
			if b == nil {
				return out, fmt.Errorf("a delta for step %d before its start", d.Index)
			}
			switch {
			case d.GetDeltaText() != nil:
				b.text += d.GetDeltaText().Text
			case d.GetDeltaThoughtSummary() != nil && d.GetDeltaThoughtSummary().GetContentText() != nil:
				b.text += d.GetDeltaThoughtSummary().GetContentText().Text
			case d.GetDeltaThoughtSignature() != nil:
				b.step.ThoughtStep.Signature = d.GetDeltaThoughtSignature().Signature
			case d.GetDeltaArgumentsDelta() != nil:
				b.args += *d.GetDeltaArgumentsDelta().Arguments
			}
		case ev.GetDataInteractionCompleted() != nil:
			it := ev.GetDataInteractionCompleted().Interaction
			out.status, out.usage = string(it.Status), it.Usage
		case ev.GetDataError() != nil:
			return out, fmt.Errorf("error event: %s", *ev.GetDataError().Error.Message)
		}
	}
	if err := es.Err(); err != nil {
		return out, err
	}
	for _, b := range steps {
		s := b.step
		switch {
		case s.ModelOutputStep != nil:
			s.ModelOutputStep.Content = []gi.Content{textContent(b.text)}
		case s.ThoughtStep != nil && b.text != "":
			s.ThoughtStep.Summary = []gi.ThoughtSummaryContent{gi.NewThoughtSummaryContent(gi.TextContent{Text: b.text})}
		case s.FunctionCallStep != nil:
			if err := json.Unmarshal([]byte(b.args), &s.FunctionCallStep.Arguments); err != nil {
				return out, fmt.Errorf("call %s: arguments %q: %v", s.FunctionCallStep.ID, b.args, err)
			}
		}
		out.steps = append(out.steps, s)
		out.add(s)
	}
	return out, nil
}

func (o *sdkInteraction) add(s gi.Step) {
	switch {
	case s.ModelOutputStep != nil:
		for _, c := range s.ModelOutputStep.Content {
			if c.TextContent != nil {
				o.text += c.TextContent.Text
			}
		}
	case s.ThoughtStep != nil:
		for _, c := range s.ThoughtStep.Summary {
			if c.TextContent != nil {
				o.reasoning += c.TextContent.Text
			}
		}
		if s.ThoughtStep.Signature != nil && *s.ThoughtStep.Signature != "" {
			o.signatures++
		}
	case s.FunctionCallStep != nil:
		o.calls = append(o.calls, *s.FunctionCallStep)
	}
}

// checkInteraction: what the SDK collected is the turn the variant's
// model gives (sdkTurns, shared with the Responses loop). A refusal is the
// interaction's status failed (with the blocked-generation code), not text.
func checkInteraction(t *testing.T, n int, want sdkWant, got sdkInteraction) {
	t.Helper()
	var calls []string
	for _, c := range got.calls {
		args, _ := json.Marshal(c.Arguments)
		calls = append(calls, c.Name+" "+string(args))
		if c.ID == "" {
			t.Errorf("turn %d: call %s without id", n, c.Name)
		}
	}
	if len(calls) != len(want.calls) {
		t.Fatalf("turn %d: calls %q, want %q", n, calls, want.calls)
	}
	for i, c := range calls {
		gn, ga, _ := strings.Cut(c, " ")
		wn, wa, _ := strings.Cut(want.calls[i], " ")
		if gn != wn || !jsonEqual(ga, wa) {
			t.Errorf("turn %d call %d: %s, want %s", n, i, c, want.calls[i])
		}
	}
	switch {
	case want.text != "" && got.text != want.text, want.contain != "" && !strings.Contains(got.text, want.contain):
		t.Errorf("turn %d: text %q, want %q", n, got.text, want.text+want.contain)
	case want.text == "" && want.contain == "" && got.text != "":
		t.Errorf("turn %d: text %q, want none", n, got.text)
	case got.reasoning != "" || got.signatures != 0:
		t.Errorf("turn %d: reasoning %q though the request asked for none", n, got.reasoning)
	}
	wantStatus := "completed"
	switch {
	case want.refusal != "":
		wantStatus = "failed"
	case len(want.calls) > 0:
		wantStatus = "requires_action"
	}
	if got.status != wantStatus || !strings.HasPrefix(got.id, "v1_") {
		t.Errorf("turn %d: status %s id %s, want %s", n, got.status, got.id, wantStatus)
	}
	// Usage is counted from this request and this answer; the total adds
	// the thought tokens (the docs' examples).
	u := got.usage
	if u == nil || *u.TotalInputTokens < 100 || *u.TotalTokens != *u.TotalInputTokens+*u.TotalOutputTokens+*u.TotalThoughtTokens {
		t.Errorf("turn %d: usage %+v", n, u)
	}
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// The whole refund loop, for every variant, with the tools the scenario
// runs.
func TestInteractionsSDKRefundLoop(t *testing.T) {
	for _, sc := range refundScenarios(t) {
		for _, chained := range []bool{false, true} {
			for _, stream := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/chained=%v/stream=%v", sc.FullName(), chained, stream), func(t *testing.T) {
					ctx := context.Background()
					c := startInteractions(t, sc)
					p := interactionParams(t, sc)
					history := []gi.Step{gi.NewStep(gi.UserInputStep{Content: p.Input.ArrayOfStep[0].UserInputStep.Content})}
					seen := map[string]bool{}
					turns := sdkTurns[sc.Variant]
					for n, want := range turns {
						got, err := createInteraction(ctx, c, p, stream)
						if err != nil {
							t.Fatalf("turn %d: %v", n+1, err)
						}
						checkInteraction(t, n+1, want, got)
						if seen[got.id] {
							t.Errorf("turn %d: interaction id %s repeats", n+1, got.id)
						}
						seen[got.id] = true
						if len(got.calls) == 0 {
							if n != len(turns)-1 {
								t.Fatalf("turn %d ended the loop early", n+1)
							}
							break
						}
						var results []gi.Step
						for _, call := range got.calls {
							args, _ := json.Marshal(call.Arguments)
							result := gated(sc, call.Name, args)
							results = append(results, gi.NewStep(gi.FunctionResultStep{CallID: call.ID, Name: ptr(call.Name),
								Result: gi.NewFunctionResultStepResultUnion(result)}))
						}
						if chained {
							p.PreviousInteractionID = ptr(got.id)
							p.Input = ptr(gi.NewInteractionsInput(results))
							continue
						}
						history = append(append(history, got.steps...), results...)
						p.Input = ptr(gi.NewInteractionsInput(history))
					}
				})
			}
		}
	}
}

// The chain checks, as the SDK reports them: an unknown
// previous_interaction_id is 404 not_found; a result for a call the
// previous interaction did not make is 400 invalid_request.
func TestInteractionsSDKChainErrors(t *testing.T) {
	sc := refundScenarios(t)[0]
	ctx := context.Background()
	c := startInteractions(t, sc)
	p := interactionParams(t, sc)
	first, err := createInteraction(ctx, c, p, false)
	if err != nil {
		t.Fatal(err)
	}
	result := func(id string) *gi.InteractionsInput {
		return ptr(gi.NewInteractionsInput([]gi.Step{gi.NewStep(gi.FunctionResultStep{CallID: id, Result: gi.NewFunctionResultStepResultUnion("{}")})}))
	}
	for _, tc := range []struct {
		previous, callID, code string
	}{
		{"v1_nosuchinteraction", first.calls[0].ID, "not_found"},
		{first.id, "zz999999", "invalid_request"},
	} {
		p.PreviousInteractionID, p.Input = ptr(tc.previous), result(tc.callID)
		_, err := createInteraction(ctx, c, p, false)
		var ce *apierrors.CreateInteractionClientError
		if !errors.As(err, &ce) || ce.Error_.Code == nil || *ce.Error_.Code != tc.code {
			t.Errorf("previous %s call %s: %v", tc.previous, tc.callID, err)
		}
	}
	// The real call id against the real interaction continues the loop.
	p.PreviousInteractionID, p.Input = ptr(first.id), result(first.calls[0].ID)
	if _, err := createInteraction(ctx, c, p, true); err != nil {
		t.Fatal(err)
	}
}
