package adapters

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/tidwall/gjson"
)

// Descriptor is what modelwire knows of one protocol beyond encoding and
// decoding it: where its requests go, where its key travels, what its
// server keeps, how its SDKs and traces name it. Each adapters/<name>
// package declares its own and adapters/registry lists them; every router,
// key table, simulator route, snippet, bench row and option reads them
// there, so adding a protocol is its package and one registration.
type Descriptor struct {
	// Name is the contract name ("openai-responses").
	Name string
	// New makes the protocol's adapter.
	New func() Protocol
	// Provider is whose API this is: its host, its key, its trace name.
	Provider string
	Endpoint Endpoint
	Auth     Auth
	// ChainField is the request field that names a response the server
	// kept ("previous_response_id"); "" when the server keeps nothing.
	ChainField string
	// HistoryField is the request field that carries the conversation.
	HistoryField string
	// Count is the provider's token-count endpoint; nil when it has none.
	Count *CountEndpoint
	// Models is the provider's model-listing endpoint.
	Models ModelsEndpoint
	// Batch is the provider's batch API, when this protocol's requests
	// can be batched; nil when not.
	Batch *BatchEndpoint
	// SDK is how the official SDKs call it.
	SDK SDK
	// Trace names the protocol in OpenTelemetry GenAI spans.
	Trace Trace
	// Faults are the simulator's faults only this provider raises.
	Faults []string
	// CallIDPrefix is how the provider's tool call ids begin ("call_");
	// "" when calls carry no id and results match by name.
	CallIDPrefix string
	// ReadContract reads the tools' argument schemas and the output
	// schema from a request body, leniently (see Declared).
	ReadContract func(root gjson.Result, d *Declared)
	// ServerTiming is the provider's own timing header; zero when it
	// sends none.
	ServerTiming ServerTiming
	// RateLimits are its rate-limit headers; zero when it sends none.
	RateLimits RateLimitNames
	// Reasoning are the request body's members (gjson paths) that set how
	// much the model reasons; nil when none does.
	Reasoning []string
}

// ReasoningSetting is what a request body sets of reasoning, each member
// of d.Reasoning present as "name=value" (its last path segment),
// space-separated: "effort=high", "type=enabled budget_tokens=2048"; ""
// when it sets none (the provider's default).
func (d Descriptor) ReasoningSetting(body []byte) string {
	var parts []string
	for _, path := range d.Reasoning {
		if v := gjson.GetBytes(body, path); v.Exists() {
			parts = append(parts, path[strings.LastIndexByte(path, '.')+1:]+"="+v.String())
		}
	}
	return strings.Join(parts, " ")
}

// Endpoint is where a protocol's requests go.
type Endpoint struct {
	// Host is the provider's own origin ("https://api.openai.com").
	Host string
	// BaseURL is the base URL as the official SDK means it: the part of
	// a request URL before what the SDK appends (OpenAI's includes /v1).
	BaseURL string
	// BaseURLEnv is the environment variable the SDK reads a base URL from.
	BaseURLEnv string
	// Paths are the POST paths the protocol is spoken at, the encoder's
	// first; {model} stands for one path segment naming the model.
	Paths []string
	// HostHint, when set, is part of the hostname that claims a path this
	// protocol shares with another (DeepSeek's /v1/chat/completions);
	// without it the protocol with no hint takes a shared path.
	HostHint string
	// StreamField is the body switch that asks for a stream ("stream");
	// "" when the path asks instead.
	StreamField string
	// StreamAction is the path's action that asks for a stream
	// (":streamGenerateContent"), when the path asks.
	StreamAction string
	// ArrayUnless: a stream asked for by path comes as one JSON array
	// unless the query has this parameter ("alt=sse").
	ArrayUnless string
	// SSEIDs: the provider's events carry nothing that tells a repeated
	// one apart, so the simulator's duplicates get SSE ids.
	SSEIDs bool
}

// Auth is where a protocol's provider reads the API key and how it
// answers a request without one or with a wrong one.
type Auth struct {
	// Env is the environment variable the official SDK reads its key from.
	Env string
	// Header is the provider's own key header ("" when the key travels
	// only as a bearer token).
	Header string
	// Bearer: Authorization: Bearer KEY is read too (after Header).
	Bearer bool
	// Query is a URL query parameter that carries the key ("" for none).
	Query string
	// Missing and Wrong are the provider's answers (status, error kind,
	// message as Simulated.ErrorResponse takes them). In Wrong's message,
	// {key} stands for the presented key, which is shown only as stars.
	Missing, Wrong AuthError
}

// AuthError is one authentication answer.
type AuthError struct {
	Status  int
	Kind    string
	Message string
}

// SendHeader is the header a client puts its key in, and the value for
// key: the provider's own header, else Authorization: Bearer.
func (a Auth) SendHeader(key string) (name, value string) {
	if a.Header != "" {
		return a.Header, key
	}
	return "Authorization", "Bearer " + key
}

// CountEndpoint is a token-count endpoint: Path is a POST path pattern
// like Endpoint.Paths.
type CountEndpoint struct {
	Path string
	// Keep are the request fields the count takes (the generation ones
	// are refused); nil keeps every field.
	Keep []string
	// Wrap is the field the whole request goes in ("" for none), with
	// the model named as "models/{model}" beside it.
	Wrap string
	// Needs are the fields a count request must have, any one of them.
	Needs []string
	// Answer is the field of the answer that holds the count.
	Answer string
	// Missing is the provider's 400 message when none of Needs is there.
	Missing string
	// NeedsList: a needed field counts only when it is a JSON array.
	NeedsList bool
}

// ModelsEndpoint is a model-listing endpoint (GET Path, GET Path/{id}).
type ModelsEndpoint struct {
	Path string
	// Header, when set, must be on the request for this protocol to claim
	// the path (a GET /v1/models with anthropic-version is Anthropic's).
	Header string
	// Shape is the family of JSON the list and the model come in:
	// "openai", "anthropic" or "gemini".
	Shape string
	// OwnedBy is the owner an OpenAI-shaped model names.
	OwnedBy string
	// Created: an OpenAI-shaped model carries its creation time.
	Created bool
	// NotFound is the provider's 404 message for a model it does not
	// have: {id} is the id as the path names it, {model} the same less
	// a "models/" prefix.
	NotFound string
	// Methods: a ':' after the id names a method on the model (Google's
	// models/{id}:countTokens), so a path with one is not a models GET.
	Methods bool
	// Defers: another protocol sharing Path answers it (Responses leaves
	// GET /v1/models to Chat Completions).
	Defers bool
}

// The families of model-listing JSON (ModelsEndpoint.Shape).
const (
	ModelsShapeOpenAI    = "openai"
	ModelsShapeAnthropic = "anthropic"
	ModelsShapeGemini    = "gemini"
)

// SDK is how the official SDKs send the protocol's request.
type SDK struct {
	// Client is the SDK family of the Python and TypeScript snippets
	// ("openai", "anthropic"); "" writes a plain HTTP request instead.
	Client string
	// Call is the SDK method that sends the request
	// ("client.responses.create"), the same in Python and TypeScript.
	Call string
	// Known are the top-level body fields the SDK takes as arguments; the
	// rest go in extra_body.
	Known []string
	// Go names the official Go SDK's streaming call the bench measures
	// against ("openai-go Responses.NewStreaming"); "" when none.
	Go string
}

// Trace is the protocol in OpenTelemetry's GenAI conventions.
type Trace struct {
	// ProviderName is gen_ai.provider.name ("openai", "gcp.gemini").
	ProviderName string
	// Operation is gen_ai.operation.name ("chat", "generate_content").
	Operation string
}

// Declared is what a request declares, read leniently from any body the
// proxy forwards, a HAR holds or a fork re-sends: a body it cannot read
// leaves fields empty.
type Declared struct {
	Model      string
	Stream     bool
	PreviousID string
	// Tools are the offered tools' argument schemas by name (nil where a
	// tool gives none as JSON Schema, e.g. Gemini's OpenAPI parameters).
	Tools map[string]json.RawMessage
	// Schema is the output schema asked for; SchemaNote says why one
	// that was asked for is not used.
	Schema     json.RawMessage
	SchemaName string
	SchemaNote string
}

// Declared reads what a request to path with body root declares: model
// and streaming from the body or, where the protocol names them there,
// the path; chaining from ChainField; the contract by ReadContract.
func (d Descriptor) Declared(path string, root gjson.Result) Declared {
	out := Declared{Tools: map[string]json.RawMessage{}}
	if d.ModelInPath() {
		out.Model = d.PathModel(path)
		out.Stream = strings.Contains(path, d.Endpoint.StreamAction)
	} else {
		out.Model = root.Get("model").String()
		out.Stream = root.Get(d.Endpoint.StreamField).Bool()
	}
	if d.ChainField != "" {
		out.PreviousID = root.Get(d.ChainField).String()
	}
	if d.ReadContract != nil {
		d.ReadContract(root, &out)
	}
	return out
}

// ModelInPath: the protocol names its model in the URL path.
func (d Descriptor) ModelInPath() bool {
	return len(d.Endpoint.Paths) > 0 && strings.Contains(d.Endpoint.Paths[0], "{model}")
}

// PathModel is the model a path names ("" when the protocol does not
// name it there or the path does not fit).
func (d Descriptor) PathModel(path string) string {
	if !d.ModelInPath() {
		return ""
	}
	path, _, _ = strings.Cut(path, "?")
	_, after, ok := strings.Cut(path, "/models/")
	if !ok {
		return ""
	}
	model, _, _ := strings.Cut(after, ":")
	return model
}

// WithPathModel is path naming model instead (for a protocol that names
// its model in the path); ok is false when path names none.
func (d Descriptor) WithPathModel(path, model string) (string, bool) {
	p, query, _ := strings.Cut(path, "?")
	i := strings.Index(p, "/models/")
	j := strings.LastIndexByte(p, ':')
	if i < 0 || j < i {
		return path, false
	}
	p = p[:i+len("/models/")] + model + p[j:]
	if query != "" {
		p += "?" + query
	}
	return p, true
}

// Raises says whether the provider raises the simulator fault.
func (d Descriptor) Raises(fault string) bool {
	for _, f := range d.Faults {
		if f == fault {
			return true
		}
	}
	return false
}

// MatchPath says whether path fits pattern: exactly, or (suffix) at its
// end after a base URL's own path. {model} matches one segment's text.
func MatchPath(pattern, path string, suffix bool) bool {
	before, after, hasModel := strings.Cut(pattern, "{model}")
	if !hasModel {
		if suffix {
			return strings.HasSuffix(path, pattern)
		}
		return path == pattern
	}
	i := strings.Index(path, before)
	if i < 0 || (!suffix && i != 0) || !strings.HasSuffix(path, after) {
		return false
	}
	model := path[i+len(before) : len(path)-len(after)]
	return model != "" && !strings.ContainsAny(model, "/:") && len(path)-len(after) >= i+len(before)
}

// BaseURLOf is the base URL's path as the official SDK means it, for a
// request URL's path (a HAR's): the path cut before what the SDK appends
// to its base — the longest of the protocol's paths the URL ends with,
// less the path of the protocol's own BaseURL.
func (d Descriptor) BaseURLOf(path string) string {
	basePath := ""
	if u, err := url.Parse(d.Endpoint.BaseURL); err == nil {
		basePath = u.Path
	}
	appended := ""
	for _, p := range d.Endpoint.Paths {
		if MatchPath(p, path, true) && len(p) > len(appended) {
			appended = p
		}
	}
	appended = strings.TrimPrefix(appended, basePath)
	if cut, _, ok := strings.Cut(appended, "{model}"); ok {
		appended = cut
	}
	if i := strings.LastIndex(path, appended); appended != "" && i >= 0 {
		path = path[:i]
	}
	return strings.TrimSuffix(path, "/")
}

// AddTool notes a tool the request offers; schema may be absent.
func (d *Declared) AddTool(name string, schema gjson.Result) {
	if name != "" {
		d.Tools[name] = RawOf(schema)
	}
}

// RawOf is a value's JSON text, nil when it is absent or null.
func RawOf(r gjson.Result) json.RawMessage {
	if !r.Exists() || r.Type == gjson.Null {
		return nil
	}
	return json.RawMessage(r.Raw)
}

// FirstOf is the first of several spellings of a field that is present
// (Google's REST API takes camelCase and snake_case).
func FirstOf(r gjson.Result, paths ...string) gjson.Result {
	for _, p := range paths {
		if v := r.Get(p); v.Exists() {
			return v
		}
	}
	return gjson.Result{}
}
