package anthropic

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
)

// MergeUsage merges the usage object of message_start (base) with the
// cumulative usage of the last message_delta (update): every non-null field
// of update replaces the one in base, new fields are added after base's, in
// order. This is what the SDK's Accumulate does field by field
// (messageutil.go: "Every usage count here is a cumulative whole-message
// total, so it overwrites rather than adds").
func MergeUsage(base, update string) string {
	b, u := gjson.Parse(base), gjson.Parse(update)
	if !u.IsObject() {
		if b.IsObject() {
			return base
		}
		return ""
	}
	if !b.IsObject() {
		return update
	}
	type kv struct{ key, raw string }
	var fields []kv
	index := map[string]int{}
	b.ForEach(func(k, v gjson.Result) bool {
		index[k.Str] = len(fields)
		fields = append(fields, kv{k.Raw, v.Raw})
		return true
	})
	u.ForEach(func(k, v gjson.Result) bool {
		if v.Type == gjson.Null {
			return true
		}
		if i, ok := index[k.Str]; ok {
			fields[i].raw = v.Raw
		} else {
			index[k.Str] = len(fields)
			fields = append(fields, kv{k.Raw, v.Raw})
		}
		return true
	})
	var sb strings.Builder
	sb.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(f.key)
		sb.WriteByte(':')
		sb.WriteString(f.raw)
	}
	sb.WriteByte('}')
	return sb.String()
}

// NormaliseUsage turns an Anthropic usage object into canonical usage:
// input is every token read, input_tokens + cache_read_input_tokens +
// cache_creation_input_tokens (Anthropic's input_tokens excludes both);
// the cache counts are parts of it, and the writes kept for an hour
// (cache_creation.ephemeral_1h_input_tokens) part of the writes; reasoning
// is output_tokens_details.thinking_tokens when given; web searches are
// server_tool_use.web_search_requests. ProviderUsage keeps the object. It
// returns nil for anything that is not an object.
func NormaliseUsage(raw string) *adapters.Usage {
	r := gjson.Parse(raw)
	if !r.IsObject() {
		return nil
	}
	num := func(path string) *int64 {
		v := r.Get(path)
		if v.Type != gjson.Number {
			return nil
		}
		return adapters.Int(v.Int())
	}
	u := &adapters.Usage{
		OutputTokens:     num("output_tokens"),
		CacheReadTokens:  num("cache_read_input_tokens"),
		CacheWriteTokens: num("cache_creation_input_tokens"),
		ReasoningTokens:  num("output_tokens_details.thinking_tokens"),
		// Present (with the 5-minute part) when the writes are broken
		// down; the total is cache_creation_input_tokens all the same.
		CacheWrite1hTokens: num("cache_creation.ephemeral_1h_input_tokens"),
		WebSearchCalls:     num("server_tool_use.web_search_requests"),
		ProviderUsage:      []byte(raw),
	}
	if in := num("input_tokens"); in != nil {
		total := *in
		if u.CacheReadTokens != nil {
			total += *u.CacheReadTokens
		}
		if u.CacheWriteTokens != nil {
			total += *u.CacheWriteTokens
		}
		u.InputTokens = &total
	}
	return u
}

func quote(s string) string {
	if len(s) > 200 {
		n := 200
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return strconv.Quote(s)
}
