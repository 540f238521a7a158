package gemini

import (
	"strings"

	"github.com/modelwire/modelwire/adapters/wire"
)

// A request's field names as the API reads them: proto JSON accepts a
// field by its lowerCamel name and by its snake_case proto name alike.

// simSnake is a lowerCamel proto JSON name in its proto (snake_case) form,
// which the API accepts too and uses in its messages.
func simSnake(name string) string {
	var b strings.Builder
	b.Grow(len(name) + 4)
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			b.WriteByte('_')
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// simFields are the known fields of a message, by both JSON names.
type simFields map[string]string // JSON name → lowerCamel name

func simFieldSet(names ...string) simFields {
	f := simFields{}
	for _, n := range names {
		f[n], f[simSnake(n)] = n, n
	}
	return f
}

var (
	simRequestFields = simFieldSet("model", "contents", "tools", "toolConfig", "safetySettings", "systemInstruction",
		"generationConfig", "cachedContent", "serviceTier", "store", "labels", "continuationToken")
	simContentFields = simFieldSet("role", "parts")
	// simPartData are Part's `data` oneof; the others are its metadata.
	simPartData   = simFieldSet("text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode", "codeExecutionResult", "toolCall", "toolResponse")
	simPartFields = simFieldSet("text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode", "codeExecutionResult",
		"toolCall", "toolResponse", "thought", "thoughtSignature", "videoMetadata", "partMetadata", "mediaResolution")
)

// simGet reads a field by its lowerCamel or snake_case name. The
// snake_case name is matched in place, not built: a request reads a few
// dozen fields, most of them absent (thoughtSignature on every part), and
// building each name was a fifth of a check's allocations.
func simGet(obj wire.Object, camel string) wire.Value {
	if obj.Has(camel) {
		return obj.Get(camel)
	}
	for i := len(obj.Keys) - 1; i >= 0; i-- {
		if isSnakeOf(obj.Keys[i], camel) {
			return obj.Vals[i]
		}
	}
	return wire.Value{}
}

// isSnakeOf: key is simSnake(camel).
func isSnakeOf(key, camel string) bool {
	j := 0
	for i := 0; i < len(camel); i++ {
		c := camel[i]
		if 'A' <= c && c <= 'Z' {
			if j >= len(key) || key[j] != '_' {
				return false
			}
			j++
			c += 'a' - 'A'
		}
		if j >= len(key) || key[j] != c {
			return false
		}
		j++
	}
	return j == len(key)
}
