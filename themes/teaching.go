package themes

import (
	_ "embed"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
)

// The teaching texts live in teaching.json, not in code, so a workshop can
// change them.
//
//go:embed teaching.json
var teachingJSON []byte

var teaching = sync.OnceValue(func() map[string][2]string {
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(teachingJSON, &raw)
	out := make(map[string][2]string, len(raw))
	for k, v := range raw {
		var lines [2]string
		if json.Unmarshal(v, &lines) == nil {
			out[k] = lines
		}
	}
	return out
})

var indices = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[\d+\]`) })

// Explain is the two-line explanation of a protocol element: a request
// field path (indices ignored; the longest known prefix wins), an event
// type, a lane kind or a validation layer.
func Explain(key string) (what, why string, ok bool) {
	t := teaching()
	k := indices().ReplaceAllString(key, "")
	for k != "" {
		if l, found := t[k]; found {
			return l[0], l[1], true
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return "", "", false
}
