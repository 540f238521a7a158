package diff

import (
	"slices"
	"strconv"
	"strings"

	"github.com/modelwire/modelwire/jsonschema"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
)

// Kinds of change, in the order a report lists them within a turn.
const (
	KindSession    = "session"
	KindRequest    = "request"
	KindToolCall   = "tool_call"
	KindToolResult = "tool_result"
	KindResponse   = "response"
	KindUsage      = "usage"
	KindLatency    = "latency"
	KindOutput     = "output"
	KindValidation = "validation"
)

// Recording is one side of a diff: a stored session turn by turn.
type Recording struct {
	Session *store.Session
	Turns   []store.TurnRecord
}

// Load reads a session for diffing.
func Load(db *store.DB, id string) (*Recording, error) {
	s, turns, err := db.Turns(id)
	if err != nil {
		return nil, err
	}
	return &Recording{Session: s, Turns: turns}, nil
}

// Result is two stored sessions compared.
type Result struct {
	A, B    *store.Session
	Changes []Change
}

// Compare loads sessions a and b from db and compares them.
func Compare(db *store.DB, a, b string, opt Options) (*Result, error) {
	ra, err := Load(db, a)
	if err != nil {
		return nil, err
	}
	rb, err := Load(db, b)
	if err != nil {
		return nil, err
	}
	return &Result{A: ra.Session, B: rb.Session, Changes: Sessions(ra, rb, opt)}, nil
}

// Options say what counts.
type Options struct {
	// Timing adds each turn's latency (time to the terminal event): two
	// runs never take the same time, so it is off unless asked for.
	Timing bool
}

// Sessions lists what differs between a and b, aligned by turn and, within
// a turn, by call_id. The order is stable: session fields, then turn by
// turn (request, tool calls, tool results, response, usage, latency), then
// the final object and the validation layers.
func Sessions(a, b *Recording, opt Options) []Change {
	var out []Change
	sa, sb := a.Session, b.Session
	for _, f := range []struct{ name, a, b string }{
		{"scenario", scenarioOf(sa), scenarioOf(sb)},
		{"protocol", sa.Protocol, sb.Protocol},
		{"provider", sa.Provider, sb.Provider},
		{"model", sa.ModelShown(), sb.ModelShown()},
		{"status", string(sa.Status), string(sb.Status)},
	} {
		if f.a != f.b {
			out = append(out, Change{Kind: KindSession, Path: f.name, Op: OpChanged, A: f.a, B: f.b})
		}
	}
	for _, c := range Manifests(sa.Manifest, sb.Manifest) {
		if (c.Path == "model" || c.Path == "model_reported") && c.A == sa.ModelShown() && c.B == sb.ModelShown() {
			continue // the session's model row says it already
		}
		out = append(out, c)
	}
	fedBack := map[string]bool{}
	ta, tb := byTurn(fedBackResults(sa.Protocol, a.Turns, fedBack)), byTurn(fedBackResults(sb.Protocol, b.Turns, fedBack))
	turns := jsonschema.UnionKeys(ta, tb)
	lastA, lastB := lastTurn(a.Turns), lastTurn(b.Turns)
	changedResults := map[string]bool{}
	rename := pairIDs(ta, tb)
	// Calls with a recorded result on either side, and the turn that
	// proposed each call.
	recorded, proposed := map[string]bool{}, map[string]int{}
	for _, ts := range []map[int]store.TurnRecord{ta, tb} {
		for t, x := range ts {
			for _, c := range x.Calls {
				id := c.CallID
				if r, ok := rename[id]; ok {
					id = r
				}
				recorded[id] = recorded[id] || c.HasResult && !fedBack[c.CallID]
				if _, ok := proposed[id]; !ok || t < proposed[id] {
					proposed[id] = t
				}
			}
		}
	}
	// Gemini results without ids name their call by function: the call's
	// id where one call has that name ("" where several do).
	byName := map[string]string{}
	for _, x := range ta {
		for _, c := range x.Calls {
			if _, seen := byName[c.Name]; seen {
				byName[c.Name] = ""
			} else {
				byName[c.Name] = c.CallID
			}
		}
	}
	callTurn := func(id string, turn int) int {
		if t, ok := proposed[id]; ok {
			return t
		}
		return turn
	}
	carried := map[string]bool{}
	for _, t := range turns {
		x, inA := ta[t]
		y, inB := tb[t]
		p := "turns/" + strconv.Itoa(t)
		if !inA || !inB {
			c := Change{Kind: KindRequest, Turn: t, Path: p, Op: OpAdded, B: turnBrief(y)}
			if !inB {
				c.Op, c.A, c.B = OpRemoved, turnBrief(x), nil
			}
			out = append(out, c)
			continue
		}
		req := requestChanges(t, x, y, changedResults, rename)
		for i, c := range req {
			// An application's session records no results: they are seen
			// only where its next request carries them. A change there is
			// the tool result's, named once, by its call.
			if id, rest, ok := resultAt(c.Path, bodyOf(c, x, y)); ok && !recorded[id] {
				if named, ok := byName[strings.TrimPrefix(id, "name:")]; ok && strings.HasPrefix(id, "name:") && named != "" {
					id = named // a Gemini result without id answers the one call of that name
				}
				req[i] = Change{Kind: KindToolResult, Turn: callTurn(id, t), CallID: id, Path: "turns/" + strconv.Itoa(callTurn(id, t)) + "/results/" + id + rest,
					Op: c.Op, A: c.A, B: c.B}
				carried[id] = true
			}
		}
		out = append(out, req...)
		for id := range carried {
			changedResults[id] = true
		}
		calls := callChanges(t, x, y, rename, fedBack)
		out = append(out, calls...)
		for _, c := range calls {
			if c.Kind == KindToolResult {
				changedResults[c.CallID] = true
				changedResults["name:"+callsOf(x)[c.CallID].Name] = true
			}
		}
		out = append(out, responseChanges(t, x, y, t == lastA && t == lastB)...)
		if opt.Timing {
			la, lb := latency(x), latency(y)
			if la != lb {
				out = append(out, Change{Kind: KindLatency, Turn: t, Path: p + "/latency_ms", Op: OpChanged, A: la, B: lb})
			}
		}
	}
	out = append(out, outputChanges(a.Turns, b.Turns)...)
	out = append(out, validationChanges(sa.FinalValidations(), sb.FinalValidations())...)
	return out
}

// fedBackResults gives an application's calls the results its next
// request carried back (the proxy records no results or decisions: the
// application ran its tools), so they compare with a fork's recorded
// ones. fedBack notes each call so filled in: its decision is the
// application's, not recorded, and is not compared.
func fedBackResults(protocol string, turns []store.TurnRecord, fedBack map[string]bool) []store.TurnRecord {
	out := slices.Clone(turns)
	for i := 0; i+1 < len(out); i++ {
		var calls [][2]string
		var which []int
		for j, c := range out[i].Calls {
			if !c.HasResult && c.Decision == "" {
				calls, which = append(calls, [2]string{c.CallID, c.Name}), append(which, j)
			}
		}
		if len(calls) == 0 {
			continue
		}
		rs, at := session.CarriedResults(protocol, out[i].Attempt.RequestBody, out[i+1].Attempt.RequestBody, calls)
		out[i].Calls = slices.Clone(out[i].Calls)
		for k, j := range which {
			if at[k] < 0 {
				continue
			}
			c := &out[i].Calls[j]
			c.HasResult, c.Result, c.IsError = true, rs[at[k]].Content, rs[at[k]].IsError
			fedBack[c.CallID] = true
		}
	}
	return out
}

func scenarioOf(s *store.Session) string {
	if s.Variant != "" {
		return s.Scenario + "/" + s.Variant
	}
	return s.Scenario
}

func byTurn(ts []store.TurnRecord) map[int]store.TurnRecord {
	m := make(map[int]store.TurnRecord, len(ts))
	for _, t := range ts {
		m[t.Turn] = t
	}
	return m
}

func lastTurn(ts []store.TurnRecord) int {
	if len(ts) == 0 {
		return 0
	}
	return ts[len(ts)-1].Turn
}

// turnBrief stands for a turn only one side has.
func turnBrief(t store.TurnRecord) map[string]any {
	return map[string]any{"status": t.Attempt.StatusCode, "terminal": t.Summary.Terminal, "stop_reason": t.Summary.StopReason}
}

// pairIDs pairs the identifiers the provider gave b's responses with a's,
// turn by turn: the response ids, the output items' ids and signatures by
// position and kind, and the tool calls whose call_ids differ by name in call order.
// Two runs of one case never share these ids (a fork shares its parent's
// up to the fork), and differences in them say nothing; b's are read as
// a's (b's id → a's).
func pairIDs(ta, tb map[int]store.TurnRecord) map[string]string {
	// An id a uses itself is never renamed: the same value may stand for
	// something else in b (a signature derived from content, a call_id a
	// simulator numbers per turn).
	inA := map[string]bool{}
	for _, x := range ta {
		inA[x.Summary.ResponseID] = true
		for _, it := range x.Items {
			inA[it.ID], inA[it.Signature], inA[it.CallID] = true, true, true
		}
		for _, c := range x.Calls {
			inA[c.CallID] = true
		}
	}
	m := map[string]string{}
	pair := func(a, b string) {
		if a != "" && b != "" && a != b && !inA[b] {
			m[b] = a
		}
	}
	for t, x := range ta {
		y, ok := tb[t]
		if !ok {
			continue
		}
		pair(x.Summary.ResponseID, y.Summary.ResponseID)
		for i := range min(len(x.Items), len(y.Items)) {
			if x.Items[i].Kind == y.Items[i].Kind {
				pair(x.Items[i].ID, y.Items[i].ID)
				pair(x.Items[i].Signature, y.Items[i].Signature) // Gemini's thoughtSignature, Anthropic's thinking signature
			}
		}
		callsA, callsB := callsOf(x), callsOf(y)
		taken := map[string]bool{}
		for _, c := range x.Calls {
			if _, ok := callsB[c.CallID]; ok {
				continue
			}
			for _, d := range y.Calls {
				if _, ok := callsA[d.CallID]; !ok && !taken[d.CallID] && d.Name == c.Name {
					taken[d.CallID] = true
					pair(c.CallID, d.CallID)
					break
				}
			}
		}
	}
	return m
}

// renamed replaces every string of v that is a key of rename (an id) by
// its value.
func renamed(v any, rename map[string]string) any {
	if len(rename) == 0 {
		return v
	}
	switch x := v.(type) {
	case string:
		if r, ok := rename[x]; ok {
			return r
		}
	case map[string]any:
		for k, e := range x {
			x[k] = renamed(e, rename)
		}
	case []any:
		for i, e := range x {
			x[i] = renamed(e, rename)
		}
	}
	return v
}
