package sim

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// The faults the simulator can inject, each producing on the wire what
// the real failure looks like.
var faultHelp = map[string]string{
	"disconnect-mid-text": "close the connection in the middle of the answer text",
	"disconnect-mid-args": "close the connection in the middle of a tool call's arguments",
	"no-terminal":         "end the stream cleanly without its terminal event",
	"duplicate-events":    "send some events twice (same id / sequence number)",
	"late-event":          "send an event after the terminal",
	"unknown-event":       "insert an event type the protocol does not define",
	"error-after-200":     "send the provider's in-stream error event after a 200",
	"rate-limit":          "answer 429 with Retry-After: 1",
	"rate-limit-date":     "answer 429 with Retry-After as an HTTP date two seconds ahead",
	"rate-limit-long":     "answer 429 with Retry-After: 120 (beyond a minute)",
	"server-error":        "answer 500",
	"overloaded":          "answer Anthropic's 529 overloaded_error (anthropic-messages only)",
	"slow-first-byte":     "wait before sending the response headers",
	"stall":               "stop sending in the middle of the stream and hold the connection open",
	"truncate":            "cut the turn short as if max tokens were reached",
	"refusal":             "answer with a refusal instead of the scripted turn",
	"content-filter":      "stop the turn by the provider's content filter (no refusal text)",
	"pause-turn":          "pause the turn with Anthropic's pause_turn; the client sends it back to continue (anthropic-messages only)",
	"malformed-event":     "insert an event whose data is not valid JSON",
}

// FaultNames lists the faults, sorted.
func FaultNames() []string {
	names := make([]string, 0, len(faultHelp))
	for n := range faultHelp {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// FaultHelp describes a fault.
func FaultHelp(name string) string { return faultHelp[name] }

type fault struct {
	name   string
	always bool
	fired  bool
}

// Faults is a set of faults to inject; each fires once (on the first
// request it can apply to) unless marked :always. Safe for concurrent use.
type Faults struct {
	mu   sync.Mutex
	list []*fault
}

// ParseFaults reads "a,b:always".
func ParseFaults(spec string) (*Faults, error) {
	f := &Faults{}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, mode, _ := strings.Cut(part, ":")
		if _, ok := faultHelp[name]; !ok {
			return nil, fmt.Errorf("unknown fault %q (want one of %s)", name, strings.Join(FaultNames(), ", "))
		}
		if mode != "" && mode != "always" {
			return nil, fmt.Errorf("fault %s: unknown mode %q (only :always)", name, mode)
		}
		f.list = append(f.list, &fault{name: name, always: mode == "always"})
	}
	return f, nil
}

// String renders the set as ParseFaults reads it.
func (f *Faults) String() string {
	if f == nil {
		return ""
	}
	var parts []string
	for _, x := range f.list {
		p := x.name
		if x.always {
			p += ":always"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ",")
}

// take fires the named fault if it is armed and applies (the caller says
// whether it can apply to this request). It reports whether it fired.
func (f *Faults) take(name string, applies bool) bool {
	if f == nil || !applies {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, x := range f.list {
		if x.name == name && (x.always || !x.fired) {
			x.fired = true
			return true
		}
	}
	return false
}
