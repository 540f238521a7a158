package openaichat

import (
	"encoding/json"

	"github.com/tidwall/gjson"

	"github.com/modelwire/modelwire/adapters"
)

// usageEvent normalises a Chat usage object (protocols.md §2.5, §5, §8.3):
// prompt_tokens already includes cached tokens, so it is the input as
// given; the cache read is prompt_tokens_details.cached_tokens (OpenAI) or
// prompt_cache_hit_tokens (DeepSeek; it sends both, with equal values);
// completion_tokens includes reasoning_tokens. DeepSeek has no cache-write
// count; OpenAI's cache_write_tokens is used when present.
func usageEvent(raw string, deepseek bool) adapters.Event {
	u := gjson.Parse(raw)
	first, second := "prompt_tokens_details.cached_tokens", "prompt_cache_hit_tokens"
	if deepseek {
		first, second = second, first
	}
	cacheRead := num(u, first)
	if cacheRead == nil {
		cacheRead = num(u, second)
	}
	return adapters.Event{Type: adapters.EvUsage, Usage: &adapters.Usage{
		InputTokens:      num(u, "prompt_tokens"),
		OutputTokens:     num(u, "completion_tokens"),
		CacheReadTokens:  cacheRead,
		CacheWriteTokens: num(u, "prompt_tokens_details.cache_write_tokens"),
		ReasoningTokens:  num(u, "completion_tokens_details.reasoning_tokens"),
		ProviderUsage:    json.RawMessage(raw),
	}}
}

// num reads a number at path; absent or null is nil.
func num(r gjson.Result, path string) *int64 {
	v := r.Get(path)
	if v.Type != gjson.Number {
		return nil
	}
	return adapters.Int(v.Int())
}
