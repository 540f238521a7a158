package session

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/pricing"
	"github.com/modelwire/modelwire/transport"
	"github.com/modelwire/modelwire/validate"
)

// The chapter's check before sending (13.1.5): the input, the output budget
// and a margin must fit the context window, and the output budget the
// model's output limit. The input is estimated locally, and counted by the
// provider where it has an endpoint for it (Anthropic count_tokens, Gemini
// countTokens); the estimate's error is shown beside the count, since no
// rule of thumb ("one Chinese character is one token") holds in general.

// BudgetMargin is the reserve kept free of input and output.
const BudgetMargin = 1000

// Budget is one request's token budget.
type Budget struct {
	// Estimate is the local estimate of the input tokens.
	Estimate int `json:"estimate"`
	// Counted is the provider's count (0 when it has no endpoint or the
	// count failed); CountError says why it failed.
	Counted    int    `json:"counted,omitempty"`
	CountedBy  string `json:"counted_by,omitempty"`
	CountError string `json:"count_error,omitempty"`
	// ErrorPct is (estimate − counted) / counted, in percent.
	ErrorPct float64 `json:"error_pct,omitempty"`
	// Output is the output budget: the request's limit, or the model's.
	Output        int `json:"output_budget"`
	Margin        int `json:"margin"`
	ContextWindow int `json:"context_window,omitempty"`
	MaxOutput     int `json:"max_output,omitempty"`
	// Problem says why the request cannot fit ("" when it fits or the
	// model's limits are unknown).
	Problem string `json:"problem,omitempty"`
}

// Input is the best figure for the input: the count, else the estimate.
func (b *Budget) Input() int {
	if b.Counted > 0 {
		return b.Counted
	}
	return b.Estimate
}

// String is the one-line form for a person.
func (b *Budget) String() string {
	s := fmt.Sprintf("input ~%d tokens (local estimate)", b.Estimate)
	switch {
	case b.Counted > 0:
		s += fmt.Sprintf(", %d by %s (estimate off by %+.0f%%)", b.Counted, b.CountedBy, b.ErrorPct)
	case b.CountError != "":
		s += ", not counted: " + b.CountError
	}
	s += fmt.Sprintf(" + output budget %d + margin %d", b.Output, b.Margin)
	if b.ContextWindow > 0 {
		s += fmt.Sprintf(" of a %d-token window", b.ContextWindow)
	} else {
		s += " (the model's window is not in the table)"
	}
	if b.Problem != "" {
		s += " — DOES NOT FIT: " + b.Problem
	}
	return s
}

// EstimateTokens estimates the tokens of the text in a JSON request body,
// without a tokenizer: about four ASCII characters a token, one token per
// CJK character or other non-ASCII letter, and a token for each JSON
// string (keys and structure cost tokens too).
func EstimateTokens(body []byte) int {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return len(body) / 4
	}
	ascii, other, strs := 0, 0, 0
	var walk func(any)
	count := func(s string) {
		strs++
		for _, r := range s {
			switch {
			case r < utf8.RuneSelf:
				ascii++
			case unicode.IsSpace(r):
			default:
				other++
			}
		}
	}
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			count(x)
		case map[string]any:
			for k, e := range x {
				count(k)
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return ascii/4 + other + strs/2
}

// CheckBudget fills in a budget's limits for a model and an output
// budget (0: the model's limit) and judges the fit.
func CheckBudget(b *Budget, model string, maxOutput int) {
	b.Margin = BudgetMargin
	facts, ok := pricing.Models().Lookup(model)
	b.Output = maxOutput
	if ok {
		b.ContextWindow, b.MaxOutput = facts.ContextWindow, facts.MaxOutput
		if b.Output == 0 {
			b.Output = facts.MaxOutput
		}
	}
	switch {
	case !ok:
	case b.MaxOutput > 0 && b.Output > b.MaxOutput:
		b.Problem = fmt.Sprintf("the output budget %d is above the model's output limit %d", b.Output, b.MaxOutput)
	case b.Input()+b.Output+b.Margin > b.ContextWindow:
		b.Problem = fmt.Sprintf("input %d + output budget %d + margin %d = %d tokens, over the %d-token window; drop or summarise material first",
			b.Input(), b.Output, b.Margin, b.Input()+b.Output+b.Margin, b.ContextWindow)
	}
}

// budget estimates a wire request's tokens and, where the provider has a
// count endpoint, asks it; a failed count is reported, never fatal.
func (s *Session) budget(ctx context.Context, req *adapters.Request, wire *adapters.HTTPRequest) *Budget {
	b := &Budget{Estimate: EstimateTokens(wire.Body)}
	if path, body, ok := countRequest(s.cfg.Provider, s.cfg.Protocol, req.Model, wire); ok {
		n, err := s.count(ctx, wire, path, body)
		if err != nil {
			b.CountError = s.seal.All(err.Error())
		} else {
			b.CountedBy = path[strings.LastIndexAny(path, "/:")+1:]
			b.Counted = n
			if n > 0 {
				b.ErrorPct = float64(b.Estimate-n) / float64(n) * 100
			}
		}
	}
	CheckBudget(b, req.Model, req.Limits.MaxOutputTokens)
	return b
}

// countRequest builds the count request for a wire request, where the
// protocol has a token-count endpoint (its descriptor's Count) and the
// provider serves it: the protocol's own provider, or the simulator, which
// speaks every protocol (OpenAI-compatible servers have none). The count
// takes the request's Keep fields, or the whole request wrapped in Wrap
// with the model named as "models/{model}"; a path that names the model
// names it there too.
func countRequest(p transport.Provider, protocol, model string, wire *adapters.HTTPRequest) (string, []byte, bool) {
	d, ok := registry.Describe(protocol)
	if !ok || d.Count == nil || (p.Name != adapters.ProviderSim && p.Name != d.Provider) {
		return "", nil, false
	}
	var body map[string]json.RawMessage
	if json.Unmarshal(wire.Body, &body) != nil {
		return "", nil, false
	}
	path := d.Count.Path
	if strings.Contains(path, "{model}") {
		m := d.PathModel(wire.Path)
		if m == "" {
			return "", nil, false
		}
		path = strings.Replace(path, "{model}", m, 1)
	}
	if d.Count.Keep != nil {
		keep := map[string]json.RawMessage{}
		for _, k := range d.Count.Keep {
			if v, ok := body[k]; ok {
				keep[k] = v
			}
		}
		body = keep
	}
	if d.Count.Wrap == "" {
		b, _ := json.Marshal(body)
		return path, b, true
	}
	m, _ := json.Marshal("models/" + model)
	body["model"] = m
	b, _ := json.Marshal(map[string]any{d.Count.Wrap: body})
	return path, b, true
}

// count posts a count request, with the wire request's headers, and reads
// the count from input_tokens or totalTokens (the answers' fields).
func (s *Session) count(ctx context.Context, wire *adapters.HTTPRequest, path string, body []byte) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.Provider.URL(path), bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	for k, v := range wire.Headers {
		req.Header.Set(k, v)
	}
	s.cfg.Provider.Authorize(req.Header, s.cfg.Protocol)
	resp, err := s.cfg.Client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("HTTP %d: %s", resp.StatusCode, validate.OneLine(string(b), 120))
	}
	var r struct {
		InputTokens *int `json:"input_tokens"`
		TotalTokens *int `json:"totalTokens"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return 0, fmt.Errorf("unreadable count: %v", err)
	}
	switch {
	case r.InputTokens != nil:
		return *r.InputTokens, nil
	case r.TotalTokens != nil:
		return *r.TotalTokens, nil
	}
	return 0, fmt.Errorf("the count has neither input_tokens nor totalTokens")
}
