package telemetry

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/store"
)

// instrumentation is the tracer's name, the OTel scope of every span.
const instrumentation = "github.com/modelwire/modelwire/telemetry"

// gen_ai.system is deprecated in favour of gen_ai.provider.name, but many
// backends still key their LLM views on it: both are sent.
const genAISystemKey = attribute.Key("gen_ai.system")

// modelwire's own attributes, for what the conventions have no name for.
const (
	attrSessionStatus = attribute.Key("modelwire.session.status")
	attrProtocol      = attribute.Key("modelwire.protocol")
	attrProvider      = attribute.Key("modelwire.provider")
	attrSource        = attribute.Key("modelwire.source")
	attrTurn          = attribute.Key("modelwire.turn")
	attrAttempt       = attribute.Key("modelwire.attempt")
	attrRetryReason   = attribute.Key("modelwire.retry_reason")
	attrTerminal      = attribute.Key("modelwire.terminal.status")
	attrStopReason    = attribute.Key("modelwire.stop_reason")
	// The provider's own figure of its time on the request and the header
	// it came from: another clock, so an attribute, not a span event.
	attrServerMS     = attribute.Key("modelwire.server_reported.duration_ms")
	attrServerSource = attribute.Key("modelwire.server_reported.source")
	attrDecision     = attribute.Key("modelwire.tool.decision")
	attrReason       = attribute.Key("modelwire.tool.reason")
	attrRequestBody  = attribute.Key("modelwire.request.body")
	attrLayer        = attribute.Key("modelwire.validation.layer")
	attrLayerStatus  = attribute.Key("modelwire.validation.status")
	attrLayerDetail  = attribute.Key("modelwire.validation.detail")
)

func resourceFor(version string) *resource.Resource {
	return resource.NewWithAttributes(semconv.SchemaURL,
		semconv.ServiceName("modelwire"), semconv.ServiceVersion(version))
}

// providerName is gen_ai.provider.name for a protocol, as its descriptor's
// Trace names it: whose API the bytes follow, which is what the
// conventions key on (the simulator and compatible servers speak someone
// else's). A protocol the registry does not know names itself.
func providerName(protocol string) attribute.KeyValue {
	if d, ok := registry.Describe(protocol); ok && d.Trace.ProviderName != "" {
		return semconv.GenAIProviderNameKey.String(d.Trace.ProviderName)
	}
	return semconv.GenAIProviderNameKey.String(protocol)
}

// providerAttrs are gen_ai.provider.name and gen_ai.system for a protocol.
func providerAttrs(protocol string) []attribute.KeyValue {
	p := providerName(protocol)
	return []attribute.KeyValue{p, genAISystemKey.String(p.Value.AsString())}
}

// operationName is gen_ai.operation.name for a protocol, as its
// descriptor's Trace names it; chat for one the registry does not know.
func operationName(protocol string) attribute.KeyValue {
	if d, ok := registry.Describe(protocol); ok && d.Trace.Operation != "" {
		return semconv.GenAIOperationNameKey.String(d.Trace.Operation)
	}
	return semconv.GenAIOperationNameChat
}

type attemptKey struct{ turn, attempt int }

// reply is what the timeline adds to an attempt's row: the provider's own
// finish reason and, for content, what the model said.
type reply struct {
	finish  string
	text    strings.Builder
	refusal strings.Builder
	calls   []adapters.Event // tool.proposed
}

// timelineOf is the part of the timeline that holds turn's attempts (the
// whole timeline for turn 0).
func timelineOf(s *store.Session, turn int) (from, to int) {
	if turn == 0 {
		return 1, 0
	}
	from, to = -1, -1
	for _, a := range s.Attempts {
		if a.Turn != turn || a.FirstSeq == 0 {
			continue
		}
		if from < 0 || a.FirstSeq < from {
			from = a.FirstSeq
		}
		to = max(to, a.LastSeq)
	}
	if from < 0 {
		return 0, -1 // nothing recorded: an empty range
	}
	return from, to
}

// turnOf is a span's modelwire.turn (0 for the root).
func turnOf(sp sdktrace.ReadOnlySpan) int {
	for _, kv := range sp.Attributes() {
		if kv.Key == attrTurn {
			return int(kv.Value.AsInt64())
		}
	}
	return 0
}

// readReplies scans entries from to to of the timeline (to 0: the end),
// decoding only the events it needs.
func readReplies(db *store.DB, id string, from, to int, content bool) (map[attemptKey]*reply, error) {
	out := map[attemptKey]*reply{}
	if to < 0 {
		return out, nil
	}
	err := db.EachEntry(id, from, to, func(e store.Entry) error {
		if e.Attempt == 0 {
			return nil
		}
		switch adapters.EventType(e.Type) {
		case adapters.EvTerminal:
		case adapters.EvTextDelta, adapters.EvRefusalDelta, adapters.EvToolProposed:
			if !content {
				return nil
			}
		default:
			return nil
		}
		ev, ok, err := e.Canonical()
		if err != nil || !ok {
			return nil // a stored event that does not decode is left out, not fatal
		}
		k := attemptKey{e.Turn, e.Attempt}
		r := out[k]
		if r == nil {
			r = &reply{}
			out[k] = r
		}
		switch ev.Type {
		case adapters.EvTerminal:
			if r.finish == "" {
				r.finish = ev.ProviderStopReason
				if r.finish == "" {
					r.finish = string(ev.StopReason)
				}
			}
		case adapters.EvTextDelta:
			r.text.WriteString(ev.Delta)
		case adapters.EvRefusalDelta:
			r.refusal.WriteString(ev.Delta)
		case adapters.EvToolProposed:
			r.calls = append(r.calls, ev)
		}
		return nil
	})
	return out, err
}

// build starts and ends every span of session s on tracer t: the session
// as the root (invoke_agent), a child per HTTP attempt (chat or
// generate_content) and a child per decided tool call (execute_tool).
func build(t trace.Tracer, s *store.Session, replies map[attemptKey]*reply, content bool) {
	tid := TraceID(s.ID)
	rootID := spanID(s.ID, "root")
	start := s.CreatedAt
	end := s.FinishedAt
	if end.IsZero() {
		end = lastMoment(s)
	}
	name := s.ScenarioName()
	if name == "" {
		name = s.Source
	}
	rootAttrs := []attribute.KeyValue{
		semconv.GenAIOperationNameInvokeAgent,
		semconv.GenAIConversationID(s.ID),
		semconv.GenAIAgentName(name),
		semconv.GenAIRequestModel(s.Model),
		attrSessionStatus.String(string(s.Status)),
		attrProtocol.String(s.Protocol),
		attrProvider.String(s.Provider),
		attrSource.String(s.Source),
	}
	rootAttrs = append(rootAttrs, providerAttrs(s.Protocol)...)
	ctx, root := t.Start(withIDs(context.Background(), tid, rootID), "invoke_agent "+name,
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithTimestamp(start), trace.WithAttributes(rootAttrs...))
	switch s.Status {
	case store.StatusFailed:
		root.SetStatus(codes.Error, "the session failed")
	case store.StatusInterrupted:
		root.SetStatus(codes.Error, "the session was interrupted")
	}

	// A turn's validation belongs on its last attempt (the proxy judges each
	// exchange); the session's own (turn 0) on the root.
	lastOfTurn := map[int]int{}
	for i, a := range s.Attempts {
		lastOfTurn[a.Turn] = i
	}
	validations := map[int][]store.ValidationRecord{}
	for _, v := range s.Validations {
		validations[v.Turn] = append(validations[v.Turn], v)
	}
	for i, a := range s.Attempts {
		span := callSpan(ctx, t, s, a, replies[attemptKey{a.Turn, a.Attempt}], content)
		if lastOfTurn[a.Turn] == i {
			addValidations(span, validations[a.Turn], attemptEnd(a))
			delete(validations, a.Turn)
		}
		span.End(trace.WithTimestamp(attemptEnd(a)))
	}
	for _, c := range s.Calls {
		if c.Decision == "" && !c.HasResult {
			continue // proposed, never decided: nothing ran
		}
		toolSpan(ctx, t, s.ID, c, content)
	}
	for turn := range validations {
		addValidations(root, validations[turn], end)
	}
	root.End(trace.WithTimestamp(end))
}

func callSpan(ctx context.Context, t trace.Tracer, s *store.Session, a store.Attempt, r *reply, content bool) trace.Span {
	op := operationName(a.Protocol)
	attrs := append(providerAttrs(a.Protocol),
		op,
		semconv.GenAIRequestModel(s.Model),
		semconv.GenAIConversationID(s.ID),
		attrProtocol.String(a.Protocol),
		attrTurn.Int(a.Turn),
		attrAttempt.Int(a.Attempt),
	)
	if a.ResponseModel != "" {
		attrs = append(attrs, semconv.GenAIResponseModel(a.ResponseModel))
	}
	if a.ResponseID != "" {
		attrs = append(attrs, semconv.GenAIResponseID(a.ResponseID))
	}
	if r != nil && r.finish != "" {
		attrs = append(attrs, semconv.GenAIResponseFinishReasons(r.finish))
	}
	if u := a.Usage; u != nil {
		if u.InputTokens != nil {
			attrs = append(attrs, semconv.GenAIUsageInputTokens(int(*u.InputTokens)))
		}
		if u.OutputTokens != nil {
			attrs = append(attrs, semconv.GenAIUsageOutputTokens(int(*u.OutputTokens)))
		}
		if u.CacheReadTokens != nil {
			attrs = append(attrs, semconv.GenAIUsageCacheReadInputTokens(int(*u.CacheReadTokens)))
		}
		if u.CacheWriteTokens != nil {
			attrs = append(attrs, semconv.GenAIUsageCacheCreationInputTokens(int(*u.CacheWriteTokens)))
		}
	}
	if host, port := serverOf(a.URL); host != "" {
		attrs = append(attrs, semconv.ServerAddress(host))
		if port > 0 {
			attrs = append(attrs, semconv.ServerPort(port))
		}
	}
	if a.StatusCode != 0 {
		attrs = append(attrs, semconv.HTTPResponseStatusCode(a.StatusCode))
	}
	if a.RetryReason != "" {
		attrs = append(attrs, attrRetryReason.String(a.RetryReason))
	}
	if a.TerminalStatus != "" {
		attrs = append(attrs, attrTerminal.String(string(a.TerminalStatus)), attrStopReason.String(string(a.StopReason)))
	}
	if content {
		attrs = append(attrs, attrRequestBody.String(string(a.RequestBody)))
		if out := outputMessages(r); out != "" {
			attrs = append(attrs, semconv.GenAIOutputMessagesKey.String(out))
		}
	}
	role := fmt.Sprintf("call/%d/%d", a.Turn, a.Attempt)
	_, span := t.Start(withIDs(ctx, TraceID(s.ID), spanID(s.ID, role)), op.Value.AsString()+" "+s.Model,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(a.StartedAt), trace.WithAttributes(attrs...))
	marks := []struct {
		name string
		at   *time.Duration
	}{{"sent", a.Timings.Sent}, {"first_response", a.Timings.FirstByte}, {"first_event", a.Timings.FirstEvent},
		{"first_token", a.Timings.FirstToken}, {"first_text", a.Timings.FirstText}, {"terminal", a.Timings.Terminal}}
	if sv := a.Timings.Server; sv != nil {
		span.SetAttributes(attrServerMS.Float64(float64(sv.Microseconds())/1000), attrServerSource.String(a.Timings.ServerSource))
	}
	for _, m := range marks {
		if m.at != nil {
			span.AddEvent("modelwire."+m.name, trace.WithTimestamp(a.StartedAt.Add(*m.at)))
		}
	}
	if a.Error != "" || a.State == store.StatusFailed || a.State == store.StatusInterrupted {
		errType := string(a.State)
		if a.StatusCode >= 400 {
			errType = strconv.Itoa(a.StatusCode)
		}
		span.SetAttributes(semconv.ErrorTypeKey.String(errType))
		span.SetStatus(codes.Error, a.Error)
	}
	return span
}

func toolSpan(ctx context.Context, t trace.Tracer, sessionID string, c store.Call, content bool) {
	start, end := c.DecidedAt, c.ResultAt
	if start.IsZero() {
		start = end
	}
	if end.IsZero() {
		end = start
	}
	attrs := []attribute.KeyValue{
		semconv.GenAIOperationNameExecuteTool,
		semconv.GenAIToolName(c.Name),
		semconv.GenAIToolCallID(c.CallID),
		semconv.GenAIToolTypeKey.String("function"),
		attrTurn.Int(c.Turn),
	}
	if c.Decision != "" {
		attrs = append(attrs, attrDecision.String(string(c.Decision)))
	}
	if content {
		args := c.Arguments
		if len(c.Edited) > 0 {
			args = c.Edited
		}
		attrs = append(attrs, semconv.GenAIToolCallArgumentsKey.String(string(args)))
		if c.HasResult {
			attrs = append(attrs, semconv.GenAIToolCallResultKey.String(c.Result))
		}
		if c.Reason != "" {
			attrs = append(attrs, attrReason.String(c.Reason))
		}
	}
	_, span := t.Start(withIDs(ctx, TraceID(sessionID), spanID(sessionID, "tool/"+c.CallID)), "execute_tool "+c.Name,
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithTimestamp(start), trace.WithAttributes(attrs...))
	if c.IsError {
		span.SetAttributes(semconv.ErrorTypeKey.String("tool_error"))
		span.SetStatus(codes.Error, "the tool returned an error")
	}
	span.End(trace.WithTimestamp(end))
}

// addValidations records each layer's verdict as a span event.
func addValidations(span trace.Span, vs []store.ValidationRecord, at time.Time) {
	for _, v := range vs {
		span.AddEvent("modelwire.validation", trace.WithTimestamp(at), trace.WithAttributes(
			attrLayer.String(v.Layer), attrLayerStatus.String(string(v.Status)), attrLayerDetail.String(v.Detail)))
	}
}

// outputMessages is gen_ai.output.messages: the model's reply as the
// conventions shape it (one assistant message with its parts).
func outputMessages(r *reply) string {
	if r == nil {
		return ""
	}
	type part struct {
		Type      string          `json:"type"`
		Content   string          `json:"content,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
	}
	var parts []part
	if r.text.Len() > 0 {
		parts = append(parts, part{Type: "text", Content: r.text.String()})
	}
	if r.refusal.Len() > 0 {
		parts = append(parts, part{Type: "refusal", Content: r.refusal.String()})
	}
	for _, c := range r.calls {
		parts = append(parts, part{Type: "tool_call", ID: c.CallID, Name: c.Name, Arguments: c.Arguments})
	}
	if len(parts) == 0 {
		return ""
	}
	b, _ := json.Marshal([]map[string]any{{"role": "assistant", "parts": parts, "finish_reason": r.finish}})
	return string(b)
}

// serverOf is server.address and server.port of a request URL; nothing
// else of it (its query is where keys hide).
func serverOf(raw string) (string, int) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", 0
	}
	host, portText, err := net.SplitHostPort(u.Host)
	if err != nil {
		return u.Host, 0
	}
	port, _ := strconv.Atoi(portText)
	return host, port
}

// attemptEnd is when an attempt was last heard of.
func attemptEnd(a store.Attempt) time.Time {
	last := time.Duration(0)
	for _, m := range []*time.Duration{a.Timings.Sent, a.Timings.FirstByte, a.Timings.FirstEvent, a.Timings.FirstToken,
		a.Timings.FirstText, a.Timings.Terminal, a.Timings.Finished} {
		if m != nil {
			last = max(last, *m)
		}
	}
	return a.StartedAt.Add(last)
}

// lastMoment ends a session that never finished where its record ends.
func lastMoment(s *store.Session) time.Time {
	end := s.CreatedAt
	for _, a := range s.Attempts {
		if e := attemptEnd(a); e.After(end) {
			end = e
		}
	}
	for _, c := range s.Calls {
		for _, t := range []time.Time{c.DecidedAt, c.ResultAt} {
			if t.After(end) {
				end = t
			}
		}
	}
	return end
}
