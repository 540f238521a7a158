package sim

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/wire"
	"github.com/modelwire/modelwire/session"
)

// answer is the simulated model: a built-in case's responder when it has
// one, else its script played by the rules of the request (scriptTurn).
// Either way the request's limits shape the result: reasoning only when
// asked, truncation at the output-token limit, usage counted from what
// was really sent and written.
func answer(sc *session.Scenario, in *adapters.Inbound, body []byte) (adapters.ModelTurn, error) {
	var mt adapters.ModelTurn
	if sc.Responder != nil {
		var err error
		if mt, err = sc.Responder(in); err != nil {
			return mt, err
		}
	} else {
		mt = scriptTurn(sc.Script, in)
		if len(sc.Reads) > 0 {
			mt = fillFacts(mt, sc.ReadPrompt(session.Prompt(in.Prompt)))
		}
	}
	if !in.Reasoning {
		mt.Items = withoutKind(mt.Items, adapters.KindReasoning)
	}
	mt = truncate(mt, in.MaxOutputTokens)
	if mt.Usage.InputTokens == nil {
		mt.Usage = countUsage(mt, body)
	}
	return mt, nil
}

// scriptTurn plays a script as a model that follows the request: the
// next scripted turn is the first whose calls the request's tool results
// do not answer yet (results are matched to scripted calls by tool name,
// in order), and of its calls only those the request lets the model make
// are proposed — one when parallel calls are off. When no call may be
// made (tool_choice none, or the tools are not declared) the model gives
// the script's final answer.
func scriptTurn(script []adapters.ModelTurn, in *adapters.Inbound) adapters.ModelTurn {
	answered := map[string]int{}
	for _, r := range in.Results {
		answered[r.Name]++
	}
	final := script[len(script)-1]
	for _, t := range script {
		var open []adapters.OutputItem
		for _, it := range t.Items {
			if it.Kind != adapters.KindToolCall {
				continue
			}
			if answered[it.Name] > 0 {
				answered[it.Name]--
				continue
			}
			open = append(open, it)
		}
		if len(open) == 0 {
			continue
		}
		var calls []adapters.OutputItem
		for _, c := range open {
			if in.MayCall(c.Name) && (len(calls) == 0 || !in.Serial) {
				calls = append(calls, c)
			}
		}
		if len(calls) == 0 {
			break
		}
		items := withoutKind(t.Items, adapters.KindToolCall)
		return adapters.ModelTurn{Stop: adapters.StopToolCall, Items: append(items, calls...), Usage: t.Usage}
	}
	if final.Stop == adapters.StopToolCall {
		// A script that ends on calls has no answer to give without them.
		return adapters.ModelTurn{Stop: adapters.StopFinal, Items: []adapters.OutputItem{{Kind: adapters.KindMessage, Text: "I cannot continue without calling a tool."}}}
	}
	return final
}

func withoutKind(items []adapters.OutputItem, k adapters.ItemKind) []adapters.OutputItem {
	var out []adapters.OutputItem
	for _, it := range items {
		if it.Kind != k {
			out = append(out, it)
		}
	}
	return out
}

// truncate cuts the turn's text at limit output tokens, as a provider
// stops generating there; the turn then ends truncated (each protocol
// renders its own ending: incomplete/max_output_tokens, length,
// max_tokens, MAX_TOKENS). Calls that do not fit are dropped whole: a
// call cut mid-arguments never closes.
func truncate(mt adapters.ModelTurn, limit int) adapters.ModelTurn {
	if limit <= 0 || mt.Stop == adapters.StopRefusal {
		return mt
	}
	left := limit
	var out []adapters.OutputItem
	cut := false
	for _, it := range mt.Items {
		text := it.Text
		if it.Kind == adapters.KindToolCall {
			text = adapters.ArgumentText(it.Arguments)
		}
		n := Tokens(text)
		if n <= left {
			out = append(out, it)
			left -= n
			continue
		}
		cut = true
		if it.Kind == adapters.KindMessage || it.Kind == adapters.KindReasoning {
			it.Text = prefixTokens(it.Text, left)
			out = append(out, it)
		}
		break
	}
	if !cut {
		return mt
	}
	return adapters.ModelTurn{Items: out, Stop: adapters.StopTruncated, Why: mt.Why}
}

// countUsage counts a turn's usage from what was really exchanged: the
// request's text as input (so each protocol's wire shape counts), the
// items as output, reasoning apart.
func countUsage(mt adapters.ModelTurn, body []byte) adapters.Usage {
	var out, reasoning int64
	for _, it := range mt.Items {
		text := it.Text
		if it.Kind == adapters.KindToolCall {
			text = it.Name + adapters.ArgumentText(it.Arguments)
		}
		n := int64(Tokens(text))
		out += n
		if it.Kind == adapters.KindReasoning {
			reasoning += n
		}
	}
	u := adapters.Usage{InputTokens: adapters.Int(int64(inputTokens(body))), OutputTokens: adapters.Int(out), CacheReadTokens: adapters.Int(0)}
	if reasoning > 0 {
		u.ReasoningTokens = adapters.Int(reasoning)
	}
	return u
}

// inputTokens counts a request as a provider bills it: the tokens of
// every key and string in its JSON, each string's text counted by tokens
// as it stands between its quotes (an escape counts as the bytes it is
// written with, closely enough).
func inputTokens(body []byte) int {
	s := adapters.View(body)
	n := 0
	for i := 0; ; {
		k := strings.IndexByte(s[i:], '"')
		if k < 0 {
			return n
		}
		q, _ := wire.CloseQuote(s, i+k)
		n += Tokens(s[i+k+1 : q])
		if q >= len(s) {
			return n
		}
		i = q + 1
	}
}

// Tokens approximates a tokenizer: each CJK character is one token, and
// every other run of text one token per four bytes (rounded up). It is a
// documented approximation, not a real vocabulary's count. It runs over
// every request's text, so ASCII, which is never CJK, skips rune decoding.
func Tokens(s string) int {
	n, run := 0, 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if i+8 <= len(s) && c|s[i+1]|s[i+2]|s[i+3]|s[i+4]|s[i+5]|s[i+6]|s[i+7] < utf8.RuneSelf {
				run += 8 // eight ASCII bytes at once
				i += 8
				continue
			}
			run++
			i++
			continue
		}
		// Most non-ASCII text here is Chinese: three bytes in the Unified
		// Ideographs block (U+4E00–U+9FFF: lead byte E4 from B8 on, to
		// E9), counted without decoding.
		if i+2 < len(s) && c >= 0xE4 && c <= 0xE9 && (c != 0xE4 || s[i+1] >= 0xB8) && s[i+1]&0xC0 == 0x80 && s[i+2]&0xC0 == 0x80 {
			n += 1 + (run+3)/4
			run = 0
			i += 3
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if isCJK(r) {
			n += 1 + (run+3)/4
			run = 0
			continue
		}
		run += utf8.RuneLen(r)
	}
	return n + (run+3)/4
}

// prefixTokens is the longest prefix of s within limit tokens.
func prefixTokens(s string, limit int) string {
	if Tokens(s) <= limit {
		return s
	}
	best := ""
	for i := range s {
		if Tokens(s[:i]) > limit {
			break
		}
		best = s[:i]
	}
	return best
}

func isCJK(r rune) bool {
	if r >= 0x4e00 && r <= 0x9fff { // CJK Unified Ideographs, most Chinese text
		return true
	}
	// CJK punctuation and full-width forms (，。：) are tested before the
	// tables: Chinese text is full of them.
	return r >= 0x3000 && r <= 0x303f || r >= 0xff00 && r <= 0xffef ||
		unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// fillFacts writes what the prompt says into a scripted turn: {{name}} in
// a text becomes the fact's value, and an argument written "{{name}}"
// becomes its JSON value (a string, a number of cents, or null when the
// prompt does not say). So a scenario file's own model follows an edit of
// its task as the refund case's does.
func fillFacts(mt adapters.ModelTurn, facts session.Reading) adapters.ModelTurn {
	items := make([]adapters.OutputItem, len(mt.Items))
	used := map[string]bool{}
	for i, it := range mt.Items {
		for name, v := range facts {
			mark := "{{" + name + "}}"
			plain, js := factText(v)
			if strings.Contains(it.Text, mark) {
				it.Text = strings.ReplaceAll(it.Text, mark, plain)
				used[name] = true
			}
			if args := string(it.Arguments); strings.Contains(args, mark) {
				args = strings.ReplaceAll(args, `"`+mark+`"`, js)
				esc := adapters.JSONString(plain)
				args = strings.ReplaceAll(args, mark, esc[1:len(esc)-1])
				it.Arguments = []byte(args)
				used[name] = true
			}
		}
		items[i] = it
	}
	mt.Items = items
	for _, name := range slices.Sorted(maps.Keys(used)) {
		plain, _ := factText(facts[name])
		mt.Why = append(mt.Why, fmt.Sprintf("prompt-fact: %s = %s, read from the prompt", name, plain))
	}
	return mt
}

// factText is a fact's value as text and as JSON.
func factText(v any) (plain, js string) {
	switch v := v.(type) {
	case string:
		return v, adapters.JSONString(v)
	case int64:
		n := strconv.FormatInt(v, 10)
		return n, n
	}
	return "null", "null"
}
