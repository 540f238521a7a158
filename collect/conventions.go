package collect

import (
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/modelwire/modelwire/redact"
)

// The attribute names of the current GenAI semantic conventions
// (https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/) that
// collect reads, and the few names of modelwire's own export it reads back.
const (
	keyOperation    = "gen_ai.operation.name"
	keyProvider     = "gen_ai.provider.name"
	keyRequestModel = "gen_ai.request.model"
	keyRespModel    = "gen_ai.response.model"
	keyRespID       = "gen_ai.response.id"
	keyFinish       = "gen_ai.response.finish_reasons"
	keyInputTokens  = "gen_ai.usage.input_tokens"
	keyOutputTokens = "gen_ai.usage.output_tokens"
	keyCacheRead    = "gen_ai.usage.cache_read.input_tokens"
	keyCacheWrite   = "gen_ai.usage.cache_creation.input_tokens"
	keyInput        = "gen_ai.input.messages"
	keyOutput       = "gen_ai.output.messages"
	keyAgentName    = "gen_ai.agent.name"
	keyConversation = "gen_ai.conversation.id"
	keyToolName     = "gen_ai.tool.name"
	keyToolCallID   = "gen_ai.tool.call.id"
	keyToolArgs     = "gen_ai.tool.call.arguments"
	keyToolResult   = "gen_ai.tool.call.result"
	keyErrorType    = "error.type"
	keyServerAddr   = "server.address"
	keyServerPort   = "server.port"

	// Old and SDK-specific forms that are not one attribute for another:
	// a prompt or completion as plain text or as OpenAI-style messages,
	// and the Vercel AI SDK's reply as text and tool calls apart.
	keyPromptText     = "gen_ai.prompt"
	keyCompletionText = "gen_ai.completion"
	keyVercelText     = "ai.response.text"
	keyVercelCalls    = "ai.response.toolCalls"

	// modelwire's own export (telemetry/spans.go), read back so that an
	// exported session comes back the same.
	keyMWProtocol = "modelwire.protocol"
	keyMWProvider = "modelwire.provider"
	keyMWStatus   = "modelwire.session.status"
	keyMWTurn     = "modelwire.turn"
	keyMWAttempt  = "modelwire.attempt"
	keyMWBody     = "modelwire.request.body"
	keyMWTerminal = "modelwire.terminal.status"
	keyMWStop     = "modelwire.stop_reason"
	keyMWDecision = "modelwire.tool.decision"
	keyMWReason   = "modelwire.tool.reason"
	keyMWRetry    = "modelwire.retry_reason"
)

// The operations (gen_ai.operation.name) collect turns into a session.
const (
	opAgent = "invoke_agent"
	opTool  = "execute_tool"
)

// modelOps are the operations of a model call: each is a turn.
var modelOps = map[string]bool{"chat": true, "generate_content": true, "text_completion": true}

// renamed is the one table of the names SDKs still send for what the
// current conventions name otherwise. A row maps an attribute (and, when
// Value is set, only that value of it) to the current attribute and value.
// A current attribute the span also carries wins over its older name.
// Add a row here, never a branch elsewhere.
var renamed = []struct {
	From, Value string // Value "": any value, kept as it is
	To, ToValue string
}{
	// Deprecated names of the conventions themselves (semconv ≤ 1.36,
	// still sent by OpenLLMetry, LangChain's and many vendors' SDKs).
	{From: "gen_ai.system", To: keyProvider},
	{From: "gen_ai.usage.prompt_tokens", To: keyInputTokens},
	{From: "gen_ai.usage.completion_tokens", To: keyOutputTokens},
	{From: "gen_ai.usage.cache_read_input_tokens", To: keyCacheRead},
	{From: "gen_ai.usage.cache_creation_input_tokens", To: keyCacheWrite},
	{From: "gen_ai.openai.response.id", To: keyRespID},
	{From: "llm.request.type", Value: "chat", To: keyOperation, ToValue: "chat"},
	{From: "llm.request.type", Value: "completion", To: keyOperation, ToValue: "text_completion"},
	// The Vercel AI SDK (ai-sdk.dev/docs/ai-sdk-core/telemetry): its
	// spans say what they are by ai.operationId; the provider call
	// (doGenerate, doStream) is the model call, ai.toolCall the tool, and
	// the outer generateText/streamText call the agent's invocation.
	{From: "ai.operationId", Value: "ai.generateText.doGenerate", To: keyOperation, ToValue: "chat"},
	{From: "ai.operationId", Value: "ai.streamText.doStream", To: keyOperation, ToValue: "chat"},
	{From: "ai.operationId", Value: "ai.generateObject.doGenerate", To: keyOperation, ToValue: "chat"},
	{From: "ai.operationId", Value: "ai.streamObject.doStream", To: keyOperation, ToValue: "chat"},
	{From: "ai.operationId", Value: "ai.toolCall", To: keyOperation, ToValue: opTool},
	{From: "ai.operationId", Value: "ai.generateText", To: keyOperation, ToValue: opAgent},
	{From: "ai.operationId", Value: "ai.streamText", To: keyOperation, ToValue: opAgent},
	{From: "ai.operationId", Value: "ai.generateObject", To: keyOperation, ToValue: opAgent},
	{From: "ai.operationId", Value: "ai.streamObject", To: keyOperation, ToValue: opAgent},
	{From: "ai.telemetry.functionId", To: keyAgentName},
	{From: "ai.model.id", To: keyRequestModel},
	{From: "ai.model.provider", To: keyProvider},
	{From: "ai.response.model", To: keyRespModel},
	{From: "ai.response.id", To: keyRespID},
	{From: "ai.response.finishReason", To: keyFinish},
	{From: "ai.usage.promptTokens", To: keyInputTokens},
	{From: "ai.usage.inputTokens", To: keyInputTokens},
	{From: "ai.usage.completionTokens", To: keyOutputTokens},
	{From: "ai.usage.outputTokens", To: keyOutputTokens},
	{From: "ai.usage.cachedInputTokens", To: keyCacheRead},
	{From: "ai.prompt.messages", To: keyInput},
	{From: "ai.toolCall.name", To: keyToolName},
	{From: "ai.toolCall.id", To: keyToolCallID},
	{From: "ai.toolCall.args", To: keyToolArgs},
	{From: "ai.toolCall.input", To: keyToolArgs},
	{From: "ai.toolCall.result", To: keyToolResult},
	{From: "ai.toolCall.output", To: keyToolResult},
}

// span is one received span with its attributes under their current names.
type span struct {
	traceID  string // hex
	spanID   string
	parentID string // "" for a root
	name     string
	start    time.Time
	end      time.Time
	failed   bool   // status ERROR
	message  string // the status's message
	attrs    map[string]any
	used     map[string]bool // attributes something read (the rest are shown as unmapped)
	events   []event
	service  string
	raw      *tracepb.Span
}

type event struct {
	name  string
	at    time.Time
	attrs map[string]any
}

// newSpan reads s under its current attribute names (renamed); service
// is its resource's service.name.
func newSpan(s *tracepb.Span, service string) *span {
	scrub(s.Attributes)
	for _, e := range s.Events {
		scrub(e.Attributes)
	}
	sp := &span{traceID: hex.EncodeToString(s.TraceId), spanID: hex.EncodeToString(s.SpanId), name: s.Name,
		start: time.Unix(0, int64(s.StartTimeUnixNano)), end: time.Unix(0, int64(s.EndTimeUnixNano)),
		attrs: attrMap(s.Attributes), used: map[string]bool{}, service: service, raw: s}
	if len(s.ParentSpanId) > 0 {
		sp.parentID = hex.EncodeToString(s.ParentSpanId)
	}
	if st := s.Status; st != nil && st.Code == tracepb.Status_STATUS_CODE_ERROR {
		sp.failed, sp.message = true, st.Message
	}
	for _, r := range renamed {
		v, ok := sp.attrs[r.From]
		if !ok {
			continue
		}
		if r.Value != "" {
			if str, _ := v.(string); str != r.Value {
				continue
			}
			v = r.ToValue
		}
		if _, has := sp.attrs[r.To]; !has {
			sp.attrs[r.To] = v
		}
		sp.used[r.From] = true
	}
	for _, e := range s.Events {
		sp.events = append(sp.events, event{name: e.Name, at: time.Unix(0, int64(e.TimeUnixNano)), attrs: attrMap(e.Attributes)})
	}
	return sp
}

// scrub takes the secrets out of attributes before anything reads or
// stores them: the whole value of one whose name says it holds a secret
// (http.request.header.authorization), and in every other text the
// secrets a text can carry (key= in URLs, bearer tokens, "api_key" members).
func scrub(kvs []*commonpb.KeyValue) {
	for _, kv := range kvs {
		str, ok := kv.GetValue().GetValue().(*commonpb.AnyValue_StringValue)
		switch {
		case !ok:
			if list := kv.GetValue().GetKvlistValue(); list != nil {
				scrub(list.Values)
			}
		case redact.IsSecretName(kv.Key):
			str.StringValue = redact.Redacted
		default:
			str.StringValue = string(redact.JSONMembers([]byte(redact.Text(str.StringValue))))
		}
	}
}

// str is attribute k as text ("" when absent), marking it read.
func (s *span) str(k string) string {
	v, ok := s.attrs[k]
	if !ok {
		return ""
	}
	s.used[k] = true
	switch v := v.(type) {
	case string:
		return v
	case []any: // finish_reasons is an array of strings
		if len(v) > 0 {
			if first, ok := v[0].(string); ok {
				return first
			}
		}
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// num is attribute k as a count (nil when absent or not a number).
func (s *span) num(k string) *int64 {
	v, ok := s.attrs[k]
	if !ok {
		return nil
	}
	s.used[k] = true
	switch v := v.(type) {
	case int64:
		return &v
	case float64:
		n := int64(v)
		return &n
	case string:
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return &n
		}
	}
	return nil
}

// operation is the span's gen_ai.operation.name.
func (s *span) operation() string { return s.str(keyOperation) }

// unmapped are the attributes nothing read, as "name=value" (values cut
// at 200 bytes): kept whole in the stored span, listed for people.
func (s *span) unmapped() []string {
	var out []string
	for k, v := range s.attrs {
		if s.used[k] {
			continue
		}
		text, ok := v.(string)
		if !ok {
			b, _ := json.Marshal(v)
			text = string(b)
		}
		if len(text) > 200 {
			text = strings.ToValidUTF8(text[:200], "") + "…"
		}
		out = append(out, k+"="+text)
	}
	return out
}

// attrMap decodes OTLP attributes into Go values.
func attrMap(kvs []*commonpb.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = value(kv.Value)
	}
	return m
}

func value(v *commonpb.AnyValue) any {
	if v == nil {
		return nil
	}
	switch x := v.Value.(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_BytesValue:
		return x.BytesValue
	case *commonpb.AnyValue_ArrayValue:
		out := make([]any, 0, len(x.ArrayValue.GetValues()))
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, value(e))
		}
		return out
	case *commonpb.AnyValue_KvlistValue:
		return attrMap(x.KvlistValue.GetValues())
	}
	return nil
}
