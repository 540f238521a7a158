// Package copyout writes a request as something to run outside modelwire:
// a curl command, a Python or TypeScript snippet, a raw .http file. The
// key is always read from the provider's environment variable, never
// written inline. The workbench's inspector (copy as curl) and
// `modelwire export --format curl|python|ts|http` share it.
package copyout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/redact"
)

// Request is what a snippet needs: the request as it was sent (its key
// header, if any, is replaced) and who it was for.
type Request struct {
	Method   string
	URL      string
	Headers  map[string]string
	Body     []byte
	Protocol string
	Provider string
}

// Formats are the formats Write knows.
var Formats = []string{"curl", "python", "ts", "http"}

// Write renders r in format.
func Write(format string, r Request) (string, error) {
	switch format {
	case "curl":
		return Curl(r), nil
	case "python":
		return Python(r), nil
	case "ts":
		return TypeScript(r), nil
	case "http":
		return HTTPFile(r), nil
	}
	return "", fmt.Errorf("unknown format %q (want %s)", format, strings.Join(Formats, ", "))
}

// KeyEnv is the environment variable that holds the provider's key: a
// named provider's own, else the protocol's (its descriptor's Auth.Env),
// else the default protocol's.
func KeyEnv(protocol, provider string) string {
	if provider != "" && provider != adapters.ProviderSim {
		return strings.ToUpper(provider) + "_API_KEY"
	}
	return describe(protocol).Auth.Env
}

// describe is the protocol's descriptor, the default protocol's for one
// the registry does not know.
func describe(protocol string) adapters.Descriptor {
	if d, ok := registry.Describe(protocol); ok {
		return d
	}
	d, _ := registry.Describe(registry.Default)
	return d
}

// keyHeader is the header the protocol carries its key in: the
// provider's own, else authorization (a bearer token).
func keyHeader(protocol string) string {
	if d, ok := registry.Describe(protocol); ok && d.Auth.Header != "" {
		return strings.ToLower(d.Auth.Header)
	}
	return "authorization"
}

// transportHeaders are the HTTP client's own, not the request's.
var transportHeaders = map[string]bool{"content-length": true, "accept-encoding": true, "user-agent": true, "host": true, "connection": true}

// headers are the request's headers, lower-cased and sorted, the key
// header (added when missing) set to value.
func (r Request) headers(keyValue func(name string) string) [][2]string {
	hs := map[string]string{}
	for k, v := range r.Headers {
		k = strings.ToLower(k)
		if transportHeaders[k] {
			continue
		}
		hs[k] = v
	}
	for k := range hs {
		if redact.IsSecretName(k) { // never copied out as they were
			delete(hs, k)
		}
	}
	kh := keyHeader(r.Protocol)
	hs[kh] = keyValue(kh)
	out := make([][2]string, 0, len(hs))
	for k, v := range hs {
		out = append(out, [2]string{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// cleanURL drops secret query parameters (Gemini's key=, a gateway's
// token=), which the key header replaces, and the URL's userinfo.
func (r Request) cleanURL() string {
	u, err := url.Parse(r.URL)
	if err != nil {
		return redact.Text(r.URL)
	}
	u.User = nil
	q := u.Query()
	drop := false
	for k := range q {
		if redact.IsSecretName(k) {
			q.Del(k)
			drop = true
		}
	}
	if drop {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

func compact(b []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return string(b)
	}
	return buf.String()
}

func indent(b []byte, prefix string) string {
	var buf bytes.Buffer
	if json.Indent(&buf, b, prefix, "  ") != nil {
		return string(b)
	}
	return buf.String()
}

// Curl is the request as a ready-to-run curl.
func Curl(r Request) string {
	env := KeyEnv(r.Protocol, r.Provider)
	var b strings.Builder
	method := r.Method
	if method == "" {
		method = "POST"
	}
	fmt.Fprintf(&b, "curl -sN -X %s '%s'", method, r.cleanURL())
	for _, h := range r.headers(func(k string) string {
		if k == "authorization" {
			return "Bearer $" + env
		}
		return "$" + env
	}) {
		fmt.Fprintf(&b, " \\\n  -H \"%s: %s\"", h[0], h[1])
	}
	if len(r.Body) > 0 {
		fmt.Fprintf(&b, " \\\n  -d '%s'", strings.ReplaceAll(compact(r.Body), "'", `'\''`))
	}
	return b.String()
}

// HTTPFile is the request as a raw HTTP file, as VS Code's REST Client and
// JetBrains' HTTP client run it; the key is {{$processEnv NAME}}.
func HTTPFile(r Request) string {
	env := KeyEnv(r.Protocol, r.Provider)
	var b strings.Builder
	method := r.Method
	if method == "" {
		method = "POST"
	}
	fmt.Fprintf(&b, "%s %s HTTP/1.1\n", method, r.cleanURL())
	for _, h := range r.headers(func(k string) string {
		if k == "authorization" {
			return "Bearer {{$processEnv " + env + "}}"
		}
		return "{{$processEnv " + env + "}}"
	}) {
		fmt.Fprintf(&b, "%s: %s\n", h[0], h[1])
	}
	if len(r.Body) > 0 {
		b.WriteString("\n" + indent(r.Body, "") + "\n")
	}
	return b.String()
}

// baseURL is the URL as the official SDKs take it: OpenAI's includes
// /v1, Anthropic's and DeepSeek's do not.
func (r Request) baseURL() string {
	u, err := url.Parse(r.cleanURL())
	if err != nil {
		return r.URL
	}
	p := u.Path
	for _, suffix := range []string{"/chat/completions", "/responses", "/v1/messages"} {
		if strings.HasSuffix(p, suffix) {
			p = strings.TrimSuffix(p, suffix)
			break
		}
	}
	u.Path, u.RawQuery = p, ""
	return u.String()
}

// sdkClient is how a snippet makes the client of an SDK family (a
// descriptor's SDK.Client), in Python and TypeScript: base URL and key
// variable are filled in.
var sdkClient = map[string]struct{ py, ts string }{
	"openai": {"from openai import OpenAI\n\nclient = OpenAI(base_url=%q, api_key=os.environ[%q])\n",
		"import OpenAI from \"openai\";\n\nconst client = new OpenAI({ baseURL: %q, apiKey: process.env.%s });\n"},
	"anthropic": {"import anthropic\n\nclient = anthropic.Anthropic(base_url=%q, api_key=os.environ[%q])\n",
		"import Anthropic from \"@anthropic-ai/sdk\";\n\nconst client = new Anthropic({ baseURL: %q, apiKey: process.env.%s });\n"},
}

// sdkOf is how the official SDK sends the protocol's request; ok is false
// when there is none a snippet can make (the REST call is written then).
func sdkOf(protocol string) (adapters.SDK, bool) {
	d, ok := registry.Describe(protocol)
	if !ok || d.SDK.Call == "" {
		return adapters.SDK{}, false
	}
	_, known := sdkClient[d.SDK.Client]
	return d.SDK, known
}

func split(protocol string, body []byte) (known, extra map[string]json.RawMessage, stream bool) {
	var all map[string]json.RawMessage
	_ = json.Unmarshal(body, &all)
	// The SDK takes its Known members as arguments; the others travel in
	// extra_body (Python) so the request stays the one that was sent.
	sdk, _ := sdkOf(protocol)
	names := sdk.Known
	known, extra = map[string]json.RawMessage{}, map[string]json.RawMessage{}
	for k, v := range all {
		if contains(names, k) {
			known[k] = v
		} else {
			extra[k] = v
		}
	}
	_ = json.Unmarshal(all["stream"], &stream)
	return known, extra, stream
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// jsonOf writes the members as JSON without HTML escaping, so a snippet
// shows <, > and & as they are, not \u003c, \u003e, \u0026 (issue 27).
func jsonOf(m map[string]json.RawMessage) []byte {
	b, _ := adapters.MarshalBody(m)
	return b
}

// pyLiteral writes JSON as a Python expression: json.loads of a raw
// string, so true/false/null and every escape stay JSON's.
func pyLiteral(b []byte) string {
	s := indent(b, "")
	if strings.Contains(s, `'''`) {
		return "json.loads(" + fmt.Sprintf("%q", compact(b)) + ")"
	}
	return "json.loads(r'''" + s + "''')"
}

// Python is the request as a Python snippet: the official SDK where the
// protocol has one whose call takes the body as it is (OpenAI, DeepSeek
// through the OpenAI SDK, Anthropic), else the REST call with httpx.
func Python(r Request) string {
	env := KeyEnv(r.Protocol, r.Provider)
	sdk, ok := sdkOf(r.Protocol)
	var b strings.Builder
	b.WriteString("import json, os\n")
	if !ok {
		fmt.Fprintf(&b, "import httpx\n\n# %s: the REST call as it was sent.\nbody = %s\n", r.Protocol, pyLiteral(r.Body))
		fmt.Fprintf(&b, "with httpx.stream(%q, %q,\n        headers={", orPost(r.Method), r.cleanURL())
		for i, h := range r.headers(func(string) string { return "" }) {
			if i > 0 {
				b.WriteString(", ")
			}
			if h[0] == keyHeader(r.Protocol) {
				fmt.Fprintf(&b, "%q: os.environ[%q]", h[0], env)
			} else {
				fmt.Fprintf(&b, "%q: %q", h[0], h[1])
			}
		}
		b.WriteString("},\n        json=body, timeout=None) as resp:\n    for line in resp.iter_lines():\n        print(line)\n")
		return b.String()
	}
	known, extra, stream := split(r.Protocol, r.Body)
	fmt.Fprintf(&b, sdkClient[sdk.Client].py, r.baseURL(), env)
	fmt.Fprintf(&b, "body = %s\n", pyLiteral(jsonOf(known)))
	call := sdk.Call + "(**body"
	if len(extra) > 0 {
		fmt.Fprintf(&b, "# Not arguments of the SDK's call: sent as they were, in the body.\nextra = %s\n", pyLiteral(jsonOf(extra)))
		call += ", extra_body=extra"
	}
	if hs := r.extraHeaders(); len(hs) > 0 {
		call += ", extra_headers={"
		for i, h := range hs {
			if i > 0 {
				call += ", "
			}
			call += fmt.Sprintf("%q: %q", h[0], h[1])
		}
		call += "}"
	}
	call += ")"
	if stream {
		fmt.Fprintf(&b, "for event in %s:\n    print(event.to_json(indent=None))\n", call)
	} else {
		fmt.Fprintf(&b, "print(%s.to_json())\n", call)
	}
	return b.String()
}

// extraHeaders are the request's headers an SDK does not set itself
// (anthropic-beta, say).
func (r Request) extraHeaders() [][2]string {
	var out [][2]string
	for _, h := range r.headers(func(string) string { return "" }) {
		switch h[0] {
		case keyHeader(r.Protocol), "content-type", "accept", "anthropic-version":
			continue
		}
		out = append(out, h)
	}
	return out
}

func orPost(m string) string {
	if m == "" {
		return "POST"
	}
	return m
}

// TypeScript is the request as a TypeScript (Node 18+) snippet: the
// official SDK for OpenAI, DeepSeek (through the OpenAI SDK) and
// Anthropic, else fetch.
func TypeScript(r Request) string {
	env := KeyEnv(r.Protocol, r.Provider)
	sdk, ok := sdkOf(r.Protocol)
	var b strings.Builder
	if !ok {
		fmt.Fprintf(&b, "// %s: the REST call as it was sent.\nconst body = %s;\n", r.Protocol, indent(r.Body, ""))
		fmt.Fprintf(&b, "const resp = await fetch(%q, {\n  method: %q,\n  headers: {\n", r.cleanURL(), orPost(r.Method))
		for _, h := range r.headers(func(string) string { return "" }) {
			if h[0] == keyHeader(r.Protocol) {
				fmt.Fprintf(&b, "    %q: process.env.%s!,\n", h[0], env)
			} else {
				fmt.Fprintf(&b, "    %q: %q,\n", h[0], h[1])
			}
		}
		b.WriteString("  },\n  body: JSON.stringify(body),\n});\nfor await (const chunk of resp.body!) process.stdout.write(chunk);\n")
		return b.String()
	}
	_, _, stream := split(r.Protocol, r.Body)
	fmt.Fprintf(&b, sdkClient[sdk.Client].ts, r.baseURL(), env)
	// The SDKs send the body they are given, members they do not type
	// included; `any` keeps the snippet the request that was sent.
	fmt.Fprintf(&b, "const body: any = %s;\n", indent(r.Body, ""))
	call := sdk.Call + "(body"
	if hs := r.extraHeaders(); len(hs) > 0 {
		call += ", { headers: {"
		for i, h := range hs {
			if i > 0 {
				call += ","
			}
			call += fmt.Sprintf(" %q: %q", h[0], h[1])
		}
		call += " } }"
	}
	call += ")"
	if stream {
		fmt.Fprintf(&b, "const stream: any = await %s;\nfor await (const event of stream) console.log(JSON.stringify(event));\n", call)
	} else {
		fmt.Fprintf(&b, "console.log(JSON.stringify(await %s, null, 2));\n", call)
	}
	return b.String()
}
