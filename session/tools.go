package session

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Executor runs one tool call outside the model. It returns the result
// text and whether it is an error result; it never fakes a success.
type Executor func(ctx context.Context, args json.RawMessage) (content string, isError bool)

// ObservedResult is a tool result the application really fed back.
type ObservedResult struct {
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Content   string          `json:"content"`
	IsError   bool            `json:"is_error"`
}

// Observations are what a session saw, for the domain checks: the tool
// results (an answer may only cite what was observed) and the prompt the
// model was sent (the task's amount is what the request said, not a
// constant of the case).
type Observations struct {
	Results []ObservedResult `json:"results"`
	Prompt  Prompt           `json:"-"`
	// Stop, when set, is the run's cancellation (ctx.Done()): a scenario
	// expression still evaluating against these observations stops at
	// once when it closes (Ctrl-C), not only at its time bound.
	Stop <-chan struct{} `json:"-"`
}

// EvidenceIDs collects every "evidence_id" string in successful results.
func (o *Observations) EvidenceIDs() map[string]bool {
	ids := map[string]bool{}
	for _, r := range o.Results {
		if r.IsError {
			continue
		}
		var v any
		if json.Unmarshal([]byte(r.Content), &v) != nil {
			continue
		}
		collectEvidence(v, ids)
	}
	return ids
}

func collectEvidence(v any, ids map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "evidence_id" {
				ids[s] = true
			}
			collectEvidence(e, ids)
		}
	case []any:
		for _, e := range x {
			collectEvidence(e, ids)
		}
	}
}

// Result returns the first successful result of a tool, decoded.
func (o *Observations) Result(name string) (map[string]any, bool) {
	for _, r := range o.Results {
		if r.Name != name || r.IsError {
			continue
		}
		var m map[string]any
		if json.Unmarshal([]byte(r.Content), &m) == nil {
			return m, true
		}
	}
	return nil, false
}

// commandTimeout bounds a scenario tool command.
const commandTimeout = 10 * time.Second

// RunTool executes a tool of the scenario: its Go executor, else a canned
// result matching the arguments, else its default, else its command. A tool
// the scenario does not define, or arguments nothing answers, give an error
// result that says so.
func (sc *Scenario) RunTool(ctx context.Context, name string, args json.RawMessage) (string, bool) {
	if ex, ok := sc.Executors[name]; ok {
		return ex(ctx, args)
	}
	t, ok := sc.Tool(name)
	if !ok {
		return fmt.Sprintf("unknown tool %q", name), true
	}
	for _, r := range t.Results {
		if jsonEqual(r.Arguments, args) {
			return contentText(r.Content), r.IsError
		}
	}
	if t.Default != nil {
		return contentText(t.Default.Content), t.Default.IsError
	}
	if len(t.Command) > 0 {
		return runCommand(ctx, t.Command, args)
	}
	return fmt.Sprintf("no result for %s with arguments %s", name, args), true
}

func runCommand(ctx context.Context, argv []string, args json.RawMessage) (string, bool) {
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = bytes.NewReader(args)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(stdout.String())
		}
		return fmt.Sprintf("tool command %s failed: %v: %s", argv[0], err, msg), true
	}
	return strings.TrimSpace(stdout.String()), false
}

// contentText turns canned content into result text: a JSON string is
// used as is, anything else as compact JSON.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
