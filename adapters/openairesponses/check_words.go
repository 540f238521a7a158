package openairesponses

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
)

// The API's words for what a check finds, and the readings the checks share.

// ---- the API's words ----------------------------------------------------------

func simInvalid(message, param, code string) *adapters.SimError {
	return simError(http.StatusBadRequest, message, "invalid_request_error", param, code)
}

func simMissing(param string) *adapters.SimError {
	return simInvalid("Missing required parameter: '"+param+"'.", param, "missing_required_parameter")
}

// simGot names a value's type as the API's messages do.
func simGot(v wire.Value) string {
	switch v.Kind() {
	case wire.KindString:
		return "a string"
	case wire.KindNumber:
		if v.Integer() {
			return "an integer"
		}
		return "a decimal number"
	case wire.KindBool:
		return "a boolean"
	case wire.KindArray:
		return "an array"
	}
	return "an object" // objects, and null (as the API says for model: null)
}

func simWrongType(param, want string, v wire.Value) *adapters.SimError {
	return simInvalid(fmt.Sprintf("Invalid type for '%s': expected %s, but got %s instead.", param, want, simGot(v)), param, "invalid_type")
}

// simList quotes values as the API lists them: 'a' and 'b'; 'a', 'b', and 'c'.
func simList(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = "'" + v + "'"
	}
	switch len(q) {
	case 0:
		return ""
	case 1:
		return q[0]
	case 2:
		return q[0] + " and " + q[1]
	}
	return strings.Join(q[:len(q)-1], ", ") + ", and " + q[len(q)-1]
}

func simBadValue(param, value string, supported []string) *adapters.SimError {
	return simInvalid(fmt.Sprintf("Invalid value: '%s'. Supported values are: %s.", value, simList(supported)), param, "invalid_value")
}

// number checks a number member's type and range; integer members must be
// whole numbers.
func (r *request) number(name string, integer bool, lo, hi float64) (float64, *adapters.SimError) {
	v := r.top.Get(name)
	if !v.Present() {
		return 0, nil
	}
	want, word := "a decimal", "decimal"
	if integer {
		want, word = "an integer", "integer"
	}
	f, ok := v.Float()
	if !ok || integer && !v.Integer() {
		return 0, simWrongType(name, want, v)
	}
	if f < lo {
		return 0, simInvalid(fmt.Sprintf("Invalid '%s': %s below minimum value. Expected a value >= %s, but got %s instead.", name, word, simFloat(lo), v.Raw), name, word+"_below_min_value")
	}
	if f > hi {
		return 0, simInvalid(fmt.Sprintf("Invalid '%s': %s above maximum value. Expected a value <= %s, but got %s instead.", name, word, simFloat(hi), v.Raw), name, word+"_above_max_value")
	}
	return f, nil
}

func simFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// simDistance is the edit distance of a and b, or 3 when it is more than 2.
func simDistance(a, b string) int {
	if d := len(a) - len(b); d > 2 || d < -2 {
		return 3
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], 3)
}

// unknownKey reports the first member (in body order) the API does not
// know, with its "Did you mean" hint: the nearest known key within two
// edits that the body does not already have.
func (r *request) unknownKey() *adapters.SimError {
	for _, key := range r.top.Keys {
		if slices.Contains(simKnownKeys, key) {
			continue
		}
		if key == "messages" {
			return simInvalid("Unsupported parameter: 'messages'. In the Responses API, this parameter has moved to 'input'. Try again with the new parameter. See the API documentation for more information: https://platform.openai.com/docs/api-reference/responses/create.", "", "unsupported_parameter")
		}
		msg := "Unknown parameter: '" + key + "'."
		best, bestD := "", 3
		for _, k := range simKnownKeys {
			if r.top.Has(k) {
				continue
			}
			if d := simDistance(key, k); d < bestD || d == bestD && d < 3 && k < best {
				best, bestD = k, d
			}
		}
		if best != "" {
			msg += " Did you mean '" + best + "'?"
		}
		return simInvalid(msg, key, "unknown_parameter")
	}
	return nil
}

// simNotJSON is the API's answer to a body it cannot parse.
func simNotJSON() *adapters.SimError {
	return simInvalid("We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)", "", "")
}

// simOtherFamilies are model names of other providers: the API knows none
// of them (any other name is accepted, as the simulator answers every
// model it is given).
var simOtherFamilies = []string{"claude-", "gemini-", "models/"}

// simValidName: a tool name matches ^[a-zA-Z0-9_-]+$ (checked by hand:
// the regexp was a tenth of the tools check, for every tool of every
// request).
func simValidName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return s != ""
}
