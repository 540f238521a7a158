package wire

import (
	"slices"
	"strings"
)

// Base62 is the alphabet of OpenAI's ids (chatcmpl-…, call_…).
const Base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Digits writes the last n digits of w in the base of alphabet (its
// length), most significant first; n may exceed what w needs (leading
// zero digits). Simulated ids are words of adapters.SimWord written this
// way, each provider with its own alphabet and length.
func Digits(b *strings.Builder, alphabet string, w uint64, n int) {
	var buf [24]byte
	b.Write(AppendDigits(buf[:0], alphabet, w, n))
}

// AppendDigits is Digits appending to dst.
func AppendDigits(dst []byte, alphabet string, w uint64, n int) []byte {
	base := uint64(len(alphabet))
	dst = slices.Grow(dst, n)
	d := dst[len(dst) : len(dst)+n]
	for i := n - 1; i >= 0; i-- {
		d[i] = alphabet[w%base]
		w /= base
	}
	return dst[:len(dst)+n]
}
