package store

import (
	"crypto/rand"
	"strings"
	"time"
)

// Session ids are 12 characters of lowercase Crockford base32: 9 for the
// creation time in milliseconds (sortable, good until the year 3084) and 3
// random. They sort by creation time, avoid the letters that read like
// digits, and a short prefix is usually enough to name one.
const idAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// IDLength is the length of a session id.
const IDLength = 12

func newID(t time.Time) string {
	var b [IDLength]byte
	ms := uint64(t.UnixMilli())
	for i := 8; i >= 0; i-- {
		b[i] = idAlphabet[ms&31]
		ms >>= 5
	}
	var r [3]byte
	_, _ = rand.Read(r[:])
	for i := 0; i < 3; i++ {
		b[9+i] = idAlphabet[r[i]&31]
	}
	return string(b[:])
}

// normalizeID reads an id or prefix as typed: case-insensitive, with the
// Crockford readings of the letters left out (i, l → 1; o → 0).
func normalizeID(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.NewReplacer("i", "1", "l", "1", "o", "0").Replace(s)
}

// validIDPrefix reports whether s can be (the start of) a session id.
func validIDPrefix(s string) bool {
	if s == "" || len(s) > IDLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(idAlphabet, s[i]) < 0 {
			return false
		}
	}
	return true
}
