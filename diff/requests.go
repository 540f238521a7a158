package diff

// Requests compared: the bodies as sent, and the tool results they carry
// back, matched by call id however each protocol nests them.

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/modelwire/modelwire/jsonschema"
	"github.com/modelwire/modelwire/store"
)

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
	ba, errA := jsonschema.ParseJSON(x.Attempt.RequestBody)
	bb, errB := jsonschema.ParseJSON(y.Attempt.RequestBody)
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
	v, _ := jsonschema.ParseJSON(body)
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
			v = x[jsonschema.UnescapeToken(seg)]
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
