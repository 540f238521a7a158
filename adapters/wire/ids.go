package wire

import "strings"

// Base62 is the alphabet of OpenAI's ids (chatcmpl-…, call_…).
const Base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Digits writes the last n digits of w in the base of alphabet (its
// length), most significant first; n may exceed what w needs (leading
// zero digits). Simulated ids are words of adapters.SimWord written this
// way, each provider with its own alphabet and length.
func Digits(b *strings.Builder, alphabet string, w uint64, n int) {
	base := uint64(len(alphabet))
	var buf [24]byte
	var d []byte
	if n <= len(buf) {
		d = buf[:n]
	} else {
		d = make([]byte, n)
	}
	for i := n - 1; i >= 0; i-- {
		d[i] = alphabet[w%base]
		w /= base
	}
	b.Write(d)
}
