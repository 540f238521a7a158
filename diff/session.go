package diff

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/modelwire/modelwire/adapters"
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
	fedBack := map[string]bool{}
	ta, tb := byTurn(fedBackResults(sa.Protocol, a.Turns, fedBack)), byTurn(fedBackResults(sb.Protocol, b.Turns, fedBack))
	var turns []int
	for t := range ta {
		turns = append(turns, t)
	}
	for t := range tb {
		if _, ok := ta[t]; !ok {
			turns = append(turns, t)
		}
	}
	slices.Sort(turns)
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

// requestChanges compares the turn's request: its path and its body. A
// change inside a tool result that the request carries back is left out
// when that result was already named as changed: it is the same change,
// seen where it is sent.
func requestChanges(turn int, x, y store.TurnRecord, changedResults map[string]bool, rename map[string]string) []Change {
	p := "turns/" + strconv.Itoa(turn) + "/request"
	var out []Change
	if pa, pb := urlPath(x.Attempt.URL), urlPath(y.Attempt.URL); pa != pb {
		out = append(out, Change{Kind: KindRequest, Turn: turn, Path: p + "/path", Op: OpChanged, A: pa, B: pb})
	}
	ba, errA := session.ParseJSON(x.Attempt.RequestBody)
	bb, errB := session.ParseJSON(y.Attempt.RequestBody)
	bb = renamed(bb, rename)
	if errA != nil || errB != nil {
		if string(x.Attempt.RequestBody) != string(y.Attempt.RequestBody) {
			out = append(out, Change{Kind: KindRequest, Turn: turn, Path: p + "/body", Op: OpChanged,
				A: string(x.Attempt.RequestBody), B: string(y.Attempt.RequestBody)})
		}
		return out
	}
	for _, c := range Values("", ba, bb, nil) {
		if carriesResult(bb, c.Path, changedResults) || carriesResult(ba, c.Path, changedResults) {
			continue
		}
		c.Kind, c.Turn, c.Path = KindRequest, turn, p+"/body/"+c.Path
		out = append(out, c)
	}
	return out
}

func urlPath(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Path
}

// resultKeys name the call a tool result answers, in each wire format.
var resultKeys = []string{"call_id", "tool_call_id", "tool_use_id"}

// carriesResult reports whether path, walked through root, passes through
// a tool result (an object naming its call) whose call_id is in ids (or,
// for Gemini without ids, whose function is "name:"+name in ids).
func carriesResult(root any, path string, ids map[string]bool) bool {
	if len(ids) == 0 {
		return false
	}
	return walkResults(root, path, func(id string, _ map[string]any) bool { return ids[id] }) != ""
}

// bodyOf is the request body a request change's path walks (the new
// side's, or the old one's for a removal), decoded.
func bodyOf(c Change, x, y store.TurnRecord) any {
	body := y.Attempt.RequestBody
	if c.Op == OpRemoved {
		body = x.Attempt.RequestBody
	}
	v, _ := session.ParseJSON(body)
	return v
}

// resultAt finds the tool result a request change's path passes through:
// its call_id (Gemini without ids: "name:"+function) and the rest of the
// path inside the result's content (Responses output, Chat and Anthropic
// content, Gemini response).
func resultAt(path string, root any) (id, rest string, ok bool) {
	p, found := strings.CutPrefix(path, "turns/")
	if !found {
		return "", "", false
	}
	_, p, _ = strings.Cut(p, "/request/body/")
	at := -1
	// (A Responses function_call item names its call_id too: it is the
	// call, not its result.)
	id = walkResults(root, p, func(_ string, obj map[string]any) bool { return obj["type"] != "function_call" }, &at)
	if id == "" {
		return "", "", false
	}
	// The rest of the path after the result object and its content member
	// (and, in Gemini's response object, the output or error member that
	// holds the result).
	segs := strings.Split(p, "/")
	from := at + 1
	if from < len(segs) && segs[at] == "response" && (segs[from] == "output" || segs[from] == "error") {
		from++
	}
	if from < len(segs) {
		rest = "/" + strings.Join(segs[from:], "/")
	}
	return id, rest, true
}

// walkResults walks path through root and returns the first tool result
// object on the way whose id want accepts ("" for none); depth, when
// given, is set to the segment index at which that object stands.
func walkResults(root any, path string, want func(id string, obj map[string]any) bool, depth ...*int) string {
	v := root
	prev := ""
	for i, seg := range strings.Split(path, "/") {
		found := func(id string) string {
			for _, d := range depth {
				*d = i
			}
			return id
		}
		if m, ok := v.(map[string]any); ok {
			for _, k := range resultKeys {
				if s, ok := m[k].(string); ok && want(s, m) {
					return found(s)
				}
			}
			// Gemini's functionResponse names its call by id where it
			// has one, else by the function's name.
			if prev == "functionResponse" {
				if s, ok := m["id"].(string); ok && s != "" && want(s, m) {
					return found(s)
				}
				if s, ok := m["name"].(string); ok && want("name:"+s, m) {
					return found("name:" + s)
				}
			}
		}
		switch x := unwrap(v).(type) {
		case map[string]any:
			v = x[session.UnescapeToken(seg)]
		case []any:
			if strings.HasPrefix(seg, "[") {
				k, id, _ := strings.Cut(strings.Trim(seg, "[]"), "=")
				v = nil
				for _, it := range x {
					if m, ok := it.(map[string]any); ok && m[k] == id {
						v = it
					}
				}
			} else if i, err := strconv.Atoi(seg); err == nil && i < len(x) {
				v = x[i]
			} else {
				return ""
			}
		default:
			return ""
		}
		prev = seg
	}
	return ""
}

// callChanges compares the tool calls a turn proposed and their results,
// matched by call_id.
func callChanges(turn int, x, y store.TurnRecord, rename map[string]string, fedBack map[string]bool) []Change {
	var out []Change
	ca, cb := callsOf(x), callsOf(y)
	for id, c := range cb {
		if a, ok := rename[id]; ok {
			delete(cb, id)
			c.CallID = a
			cb[a] = c
		}
	}
	ids := make([]string, 0, len(ca)+len(cb))
	for _, c := range x.Calls {
		ids = append(ids, c.CallID)
	}
	for _, c := range y.Calls {
		id := c.CallID
		if a, ok := rename[id]; ok {
			id = a
		}
		if _, ok := ca[id]; !ok {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		p := "turns/" + strconv.Itoa(turn) + "/calls/" + id
		a, inA := ca[id]
		b, inB := cb[id]
		switch {
		case !inA:
			out = append(out, Change{Kind: KindToolCall, Turn: turn, CallID: id, Path: p, Op: OpAdded, B: callBrief(b)})
			continue
		case !inB:
			out = append(out, Change{Kind: KindToolCall, Turn: turn, CallID: id, Path: p, Op: OpRemoved, A: callBrief(a)})
			continue
		}
		if a.Name != b.Name {
			out = append(out, Change{Kind: KindToolCall, Turn: turn, CallID: id, Path: p + "/name", Op: OpChanged, A: a.Name, B: b.Name})
		}
		for _, c := range Values(p+"/arguments", raw(a.Arguments), raw(b.Arguments), nil) {
			c.Kind, c.Turn, c.CallID = KindToolCall, turn, id
			out = append(out, c)
		}
		if a.Decision != b.Decision && !fedBack[a.CallID] && !fedBack[b.CallID] {
			out = append(out, Change{Kind: KindToolCall, Turn: turn, CallID: id, Path: p + "/decision", Op: OpChanged, A: a.Decision, B: b.Decision})
		}
		for _, c := range Values(p+"/arguments_sent", raw(a.Edited), raw(b.Edited), nil) {
			c.Kind, c.Turn, c.CallID = KindToolCall, turn, id
			out = append(out, c)
		}
		rp := "turns/" + strconv.Itoa(turn) + "/results/" + id
		if a.HasResult != b.HasResult || a.IsError != b.IsError {
			out = append(out, Change{Kind: KindToolResult, Turn: turn, CallID: id, Path: rp + "/is_error", Op: OpChanged,
				A: resultState(a), B: resultState(b)})
		}
		for _, c := range Values(rp, a.Result, b.Result, nil) {
			c.Kind, c.Turn, c.CallID = KindToolResult, turn, id
			out = append(out, c)
		}
	}
	return out
}

func callsOf(t store.TurnRecord) map[string]store.Call {
	m := make(map[string]store.Call, len(t.Calls))
	for _, c := range t.Calls {
		m[c.CallID] = c
	}
	return m
}

func callBrief(c store.Call) map[string]any {
	return map[string]any{"name": c.Name, "arguments": raw(c.Arguments), "decision": c.Decision}
}

func resultState(c store.Call) string {
	switch {
	case !c.HasResult:
		return "none"
	case c.IsError:
		return "error"
	}
	return "ok"
}

// raw decodes stored JSON; nil for none, the text itself when it is not
// JSON.
func raw(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	v, err := session.ParseJSON(b)
	if err != nil {
		return string(b)
	}
	return v
}

// responseChanges compares how the turn's response ended, its text (the
// last turn's text is the final object, compared field by field instead)
// and its usage.
func responseChanges(turn int, x, y store.TurnRecord, final bool) []Change {
	p := "turns/" + strconv.Itoa(turn)
	var out []Change
	add := func(kind, path string, a, b any) {
		out = append(out, Change{Kind: kind, Turn: turn, Path: p + "/" + path, Op: OpChanged, A: a, B: b})
	}
	if x.Attempt.StatusCode != y.Attempt.StatusCode {
		add(KindResponse, "http_status", x.Attempt.StatusCode, y.Attempt.StatusCode)
	}
	sa, sb := x.Summary, y.Summary
	if sa.Terminal != sb.Terminal {
		add(KindResponse, "terminal", sa.Terminal, sb.Terminal)
	}
	if sa.StopReason != sb.StopReason {
		add(KindResponse, "stop_reason", sa.StopReason, sb.StopReason)
	}
	if !final && sa.Text != sb.Text {
		add(KindResponse, "text", sa.Text, sb.Text)
	}
	if sa.Reasoning != sb.Reasoning {
		add(KindResponse, "reasoning", sa.Reasoning, sb.Reasoning)
	}
	if ra, rb := deref(sa.Refusal), deref(sb.Refusal); ra != rb {
		add(KindResponse, "refusal", ra, rb)
	}
	ua, ub := usageOf(sa.Usage), usageOf(sb.Usage)
	for _, k := range []string{"input_tokens", "output_tokens", "reasoning_tokens", "cache_read_tokens", "cache_write_tokens"} {
		if ua[k] != ub[k] {
			add(KindUsage, "usage/"+k, ua[k], ub[k])
		}
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func usageOf(u *adapters.Usage) map[string]any {
	m := map[string]any{}
	if u == nil {
		return m
	}
	for k, p := range map[string]*int64{"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens,
		"reasoning_tokens": u.ReasoningTokens, "cache_read_tokens": u.CacheReadTokens, "cache_write_tokens": u.CacheWriteTokens} {
		if p != nil {
			m[k] = *p
		}
	}
	return m
}

// latency is the turn's time to its terminal event in ms, to 0.1 ms.
func latency(t store.TurnRecord) any {
	if t.Attempt.Timings.Terminal == nil {
		return nil
	}
	return float64(t.Attempt.Timings.Terminal.Microseconds()/100) / 10
}

// Output is a session's final object: the last turn's text, as JSON when
// it is JSON.
func Output(turns []store.TurnRecord) any {
	if len(turns) == 0 {
		return nil
	}
	text := strings.TrimSpace(turns[len(turns)-1].Summary.Text)
	if text == "" {
		return nil
	}
	if v, err := session.ParseJSON([]byte(text)); err == nil {
		return v
	}
	return text
}

func outputChanges(a, b []store.TurnRecord) []Change {
	var out []Change
	for _, c := range Values("output", Output(a), Output(b), nil) {
		c.Kind = KindOutput
		out = append(out, c)
	}
	return out
}

func validationChanges(a, b []store.Validation) []Change {
	find := func(vs []store.Validation, layer string) (store.Validation, bool) {
		for _, v := range vs {
			if v.Layer == layer {
				return v, true
			}
		}
		return store.Validation{}, false
	}
	var layers []string
	for _, v := range append(append([]store.Validation{}, a...), b...) {
		if !slices.Contains(layers, v.Layer) {
			layers = append(layers, v.Layer)
		}
	}
	var out []Change
	for _, l := range layers {
		va, inA := find(a, l)
		vb, inB := find(b, l)
		p := "validation/" + l
		switch {
		case !inA:
			out = append(out, Change{Kind: KindValidation, Path: p, Op: OpAdded, B: vb.Status})
		case !inB:
			out = append(out, Change{Kind: KindValidation, Path: p, Op: OpRemoved, A: va.Status})
		default:
			if va.Status != vb.Status {
				out = append(out, Change{Kind: KindValidation, Path: p + "/status", Op: OpChanged, A: va.Status, B: vb.Status})
			}
			if va.Detail != vb.Detail {
				out = append(out, Change{Kind: KindValidation, Path: p + "/detail", Op: OpChanged, A: va.Detail, B: vb.Detail})
			}
		}
	}
	return out
}

// Text renders a value of a change for a person: JSON, compact (a JSON
// null is "null"; a side that has no value is its caller's to say).
func Text(v any) string {
	b, err := adapters.MarshalBody(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
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
