package sim_test

// The official Go SDK's Interactions client (google.golang.org/genai
// v1.77.0, package interactions) drives the whole refund loop against a
// real sim.Server: with the history sent back as steps and chained by
// previous_interaction_id, streaming and not, for every refund variant but
// bad-args (see below); what it collects each turn must equal the
// scenario's script. The server's chain checks are driven through the SDK
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
	if sc.Output.Mode == adapters.OutputJSONSchema {
		mime := gi.TextResponseFormatMimeTypeApplicationJSON
		p.ResponseFormat = ptr(gi.NewCreateModelInteractionResponseFormat(gi.NewResponseFormat(gi.TextResponseFormat{MimeType: &mime, Schema: jsonMap(t, sc.Output.Schema)})))
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

// checkInteraction: what the SDK collected equals the scripted turn.
func checkInteraction(t *testing.T, n int, want adapters.ModelTurn, got sdkInteraction) {
	t.Helper()
	var text, reasoning string
	var calls []adapters.OutputItem
	thoughts := 0
	for _, it := range want.Items {
		switch it.Kind {
		case adapters.KindMessage:
			text += it.Text
		case adapters.KindReasoning:
			reasoning += it.Text
			thoughts++
		case adapters.KindToolCall:
			calls = append(calls, it)
		}
	}
	if got.text != text || got.reasoning != reasoning || got.signatures != thoughts {
		t.Errorf("turn %d: text %q reasoning %q (%d signatures); want %q %q (%d)", n, got.text, got.reasoning, got.signatures, text, reasoning, thoughts)
	}
	if len(got.calls) != len(calls) {
		t.Fatalf("turn %d: %d calls, want %d", n, len(got.calls), len(calls))
	}
	for i, c := range got.calls {
		args, _ := json.Marshal(c.Arguments)
		if c.Name != calls[i].Name || len(c.ID) != 8 || !jsonEqual(string(args), adapters.ArgumentText(calls[i].Arguments)) {
			t.Errorf("turn %d call %d: %s %s %s", n, i, c.ID, c.Name, args)
		}
	}
	wantStatus := "completed"
	switch {
	case want.Stop == adapters.StopRefusal:
		wantStatus = "failed" // with the blocked-generation code in errors
	case len(calls) > 0:
		wantStatus = "requires_action"
	}
	if got.status != wantStatus || !strings.HasPrefix(got.id, "v1_") {
		t.Errorf("turn %d: status %s id %s", n, got.status, got.id)
	}
	u := got.usage
	if u == nil || int64(*u.TotalInputTokens) != deref(want.Usage.InputTokens) || int64(*u.TotalThoughtTokens) != deref(want.Usage.ReasoningTokens) ||
		int64(*u.TotalOutputTokens+*u.TotalThoughtTokens) != deref(want.Usage.OutputTokens) || int64(*u.TotalCachedTokens) != deref(want.Usage.CacheReadTokens) {
		t.Errorf("turn %d: usage %+v, want %+v", n, u, want.Usage)
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

// The whole refund loop. bad-args is left out: its first call carries
// argument text that is not a JSON object, which an Interactions body (and
// a replayed function_call step) cannot hold; `modelwire run` covers its
// streamed form.
func TestInteractionsSDKRefundLoop(t *testing.T) {
	for _, sc := range refundScenarios(t) {
		if sc.Variant == "bad-args" {
			continue
		}
		for _, chained := range []bool{false, true} {
			for _, stream := range []bool{true, false} {
				name := fmt.Sprintf("%s%s/chained=%v/stream=%v", sc.Name, "/"+sc.Variant, chained, stream)
				t.Run(name, func(t *testing.T) {
					ctx := context.Background()
					c := startInteractions(t, sc)
					p := interactionParams(t, sc)
					history := []gi.Step{gi.NewStep(gi.UserInputStep{Content: p.Input.ArrayOfStep[0].UserInputStep.Content})}
					seen := map[string]bool{}
					for n, want := range sc.Script {
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
							if n != len(sc.Script)-1 {
								t.Fatalf("turn %d ended the loop early", n+1)
							}
							break
						}
						var results []gi.Step
						for _, call := range got.calls {
							results = append(results, gi.NewStep(gi.FunctionResultStep{CallID: call.ID, Name: ptr(call.Name),
								Result: gi.NewFunctionResultStepResultUnion(`{"evidence_id":"EV-` + call.Name + `"}`)}))
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
