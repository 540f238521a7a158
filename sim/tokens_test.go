package sim

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// The simulator's token count: one token per CJK character, one per four
// bytes of other text; input counts the keys and strings of the JSON.
func TestTokens(t *testing.T) {
	for s, want := range map[string]int{"": 0, "退款": 2, "hello world": 3, "O-2048 退款": 4, "可退上限为130元": 7} {
		if got := Tokens(s); got != want {
			t.Errorf("Tokens(%q) = %d, want %d", s, got, want)
		}
	}
	if got := inputTokens([]byte(`{"a":"退款","b":["x\"y"],"n":12}`)); got != 1+2+1+1+1 {
		t.Errorf("inputTokens = %d, want 6", got)
	}
	if got := prefixTokens("可退上限为130元", 6); got != "可退上限为130" {
		t.Errorf("prefixTokens = %q", got)
	}
}

// The bulk paths (eight ASCII bytes at a time, quotes found by IndexByte)
// count as a byte-by-byte reading does: runs of ASCII broken by CJK at
// every offset, escaped quotes and backslash runs in long strings, a body
// cut inside a string.
func TestTokensBulkAgreesWithByteByByte(t *testing.T) {
	long := "abcdefghijklmnopqrstuvwxyz0123456789"
	for k := range 12 {
		s := long[:k] + "退款" + long[k:] + "é" + long[:2*k] + "中"
		if got, want := Tokens(s), oneByOne(s); got != want {
			t.Errorf("Tokens(%q) = %d, byte by byte %d", s, got, want)
		}
	}
	for _, body := range []string{
		`{"a":"` + long + `\"` + long + `","b":["退款` + long + `\\\\"],"c":"\\\"` + long + `"}`,
		`{"a":"` + long + `\\`,
		`{"a":"` + long + `\`,
		`["x\\\\\\\"y` + long + `", 12, "z"]`,
	} {
		if got, want := inputTokens([]byte(body)), inputByteByByte(body); got != want {
			t.Errorf("inputTokens(%s) = %d, byte by byte %d", body, got, want)
		}
	}
}

// The input count agrees with the byte-by-byte reading on bodies
// built at random from the bytes that matter: quotes, backslashes, ASCII,
// Chinese, other non-ASCII, full-width punctuation, a stray byte that is
// not UTF-8, at every offset from the eight-byte blocks.
func TestInputTokensAgreesOnRandomBodies(t *testing.T) {
	pieces := []string{`"`, `\\`, `\"`, "a", "abcdefghij", " ", ":", ",", "{", "退", "款项", "é", "，", "。", "\xff", "\xe4\xb8", "😀", "0123456789abcdef"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		body := b.String()
		if got, want := inputTokens([]byte(body)), inputByteByByte(body); got != want {
			t.Fatalf("inputTokens(%q) = %d, byte by byte %d", body, got, want)
		}
	}
}

// oneByOne counts tokens a character at a time, the definition the bulk
// paths must agree with.
func oneByOne(s string) int {
	n, run := 0, 0
	for _, r := range s {
		if isCJK(r) {
			n += 1 + (run+3)/4
			run = 0
			continue
		}
		run += len(string(r))
	}
	return n + (run+3)/4
}

// inputByteByByte counts a body's strings a byte at a time.
func inputByteByByte(body string) int {
	n := 0
	for i := 0; i < len(body); i++ {
		if body[i] != '"' {
			continue
		}
		j := i + 1
		for j < len(body) && body[j] != '"' {
			if body[j] == '\\' {
				j++
			}
			j++
		}
		n += oneByOne(body[i+1 : min(j, len(body))])
		i = j
	}
	return n
}
