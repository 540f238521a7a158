package jsonschema

// JSON numbers as the validator sees them: compared exactly (1 == 1.0,
// 0.1 as written, not as a float), whatever their exponents.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// number is a JSON number: its nearest float64 for the quick answers and
// the value itself for the exact ones.
type jnum struct {
	f     float64
	v     any // json.Number, a float or an integer type
	float bool
}

// numberOf reads a number from a decoded value.
func numberOf(x any) (jnum, bool) {
	switch x := x.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			var ne *strconv.NumError
			if !errors.As(err, &ne) || ne.Err != strconv.ErrRange {
				return jnum{}, false
			}
		}
		return jnum{f: f, v: x}, true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return jnum{}, false
		}
		return jnum{f: x, v: x, float: true}, true
	case float32:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return jnum{}, false
		}
		return jnum{f: f, v: x, float: true}, true
	case int:
		return jnum{f: float64(x), v: x}, true
	case int8:
		return jnum{f: float64(x), v: x}, true
	case int16:
		return jnum{f: float64(x), v: x}, true
	case int32:
		return jnum{f: float64(x), v: x}, true
	case int64:
		return jnum{f: float64(x), v: x}, true
	case uint:
		return jnum{f: float64(x), v: x}, true
	case uint8:
		return jnum{f: float64(x), v: x}, true
	case uint16:
		return jnum{f: float64(x), v: x}, true
	case uint32:
		return jnum{f: float64(x), v: x}, true
	case uint64:
		return jnum{f: float64(x), v: x}, true
	}
	return jnum{}, false
}

// text is the number as a decimal, for a float its shortest form.
func (n jnum) text() string {
	if s, ok := n.v.(json.Number); ok {
		return string(s)
	}
	return fmt.Sprint(n.v)
}

// int64 is the number as an int64 when it is a whole one that fits.
func (n jnum) int64() (int64, bool) {
	switch x := n.v.(type) {
	case json.Number:
		i, err := strconv.ParseInt(string(x), 10, 64)
		return i, err == nil
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint:
		return int64(x), x <= math.MaxInt64
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		return int64(x), x <= math.MaxInt64
	}
	if n.f == math.Trunc(n.f) && math.Abs(n.f) <= 1<<53 {
		return int64(n.f), true
	}
	return 0, false
}

// cmp orders two numbers exactly. Rounding to float64 keeps order, so
// different floats answer at once; only equal floats need the decimals.
func (n jnum) cmp(m jnum) int {
	switch {
	case n.f < m.f:
		return -1
	case n.f > m.f:
		return 1
	}
	if a, ok := n.int64(); ok {
		if b, ok := m.int64(); ok {
			switch {
			case a < b:
				return -1
			case a > b:
				return 1
			}
			return 0
		}
	}
	a, ok1 := decimalOf(n.text())
	b, ok2 := decimalOf(m.text())
	if !ok1 || !ok2 {
		return 0 // not a number's text; the validator only holds numbers
	}
	return a.cmp(b)
}

// decimal is a number as ±0.digits × 10^point, digits without leading or
// trailing zeros (none for zero), so two compare by sign, point and
// digits, whatever their exponents: big.Rat refuses exponents past 10^6.
type decimal struct {
	neg    bool
	digits string
	point  int64
}

// decimalOf reads a JSON number or Go's printing of a float ("1e+21").
func decimalOf(s string) (decimal, bool) {
	var d decimal
	s, d.neg = strings.CutPrefix(s, "-")
	mant, exp := s, int64(0)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e, err := strconv.ParseInt(s[i+1:], 10, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return decimal{}, false
		}
		// Past ±2^62 (twenty digits of exponent) every exponent reads as
		// that bound, so point below cannot overflow.
		exp = max(min(e, 1<<62), -1<<62)
	}
	whole, frac, _ := strings.Cut(mant, ".")
	all := strings.TrimLeft(whole+frac, "0")
	d.point = exp + int64(len(whole)) - int64(len(whole+frac)-len(all))
	d.digits = strings.TrimRight(all, "0")
	if d.digits == "" {
		return decimal{}, true // zero, -0 included
	}
	return d, true
}

func (a decimal) sign() int {
	switch {
	case a.digits == "":
		return 0
	case a.neg:
		return -1
	}
	return 1
}

func (a decimal) cmp(b decimal) int {
	if sa, sb := a.sign(), b.sign(); sa != sb || sa == 0 {
		return sa - sb
	}
	mag := func() int { // |a| against |b|
		if a.point != b.point {
			if a.point < b.point {
				return -1
			}
			return 1
		}
		return strings.Compare(a.digits, b.digits)
	}()
	if a.neg {
		return -mag
	}
	return mag
}

// isInteger reports a whole number: 1.0 and 1e2 are, 1.5 is not.
func (n jnum) isInteger() bool {
	if _, ok := n.v.(json.Number); ok {
		// The decimal itself, exactly: whole when no digit falls after the point.
		if d, ok := decimalOf(n.text()); ok {
			return d.point >= int64(len(d.digits))
		}
	}
	return n.f == math.Trunc(n.f)
}

// multipleOf reports n = k × m for a whole k, exactly, in work bounded by
// the numbers' digits rather than their exponents (big.Rat spends 100 ms
// building 1.5e-999999).
func (n jnum) multipleOf(m jnum) bool {
	if a, ok := n.int64(); ok {
		if b, ok := m.int64(); ok && b != 0 {
			return a%b == 0
		}
	}
	a, ok1 := decimalOf(n.text())
	b, ok2 := decimalOf(m.text())
	if !ok1 || !ok2 || b.digits == "" {
		return false // not numbers; multipleOf 0 is refused at compile
	}
	if a.digits == "" {
		return true
	}
	// n = an × 10^ea and m = bn × 10^eb with whole an, bn: n/m is whole
	// when bn divides an × 10^(ea-eb), or an is divisible by bn × 10^(eb-ea).
	an, bn := a.mantissa(), b.mantissa()
	k := a.exponent() - b.exponent()
	if k < 0 {
		if -k > int64(len(a.digits)) {
			return false // 10^-k > an, which is not zero
		}
		bn.Mul(bn, pow10(-k))
		return new(big.Int).Rem(an, bn).Sign() == 0
	}
	// bn = 2^i × 5^j × r with r prime to 10: 10^k supplies the twos and
	// fives once k ≥ i, j, and both are below bn's bit length.
	an.Mul(an, pow10(min(k, int64(bn.BitLen()))))
	return new(big.Int).Rem(an, bn).Sign() == 0
}

// mantissa is the digits as a whole number; the number is mantissa ×
// 10^exponent.
func (a decimal) mantissa() *big.Int {
	z, _ := new(big.Int).SetString(a.digits, 10)
	return z
}

func (a decimal) exponent() int64 { return a.point - int64(len(a.digits)) }

func pow10(k int64) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(k), nil)
}

// display renders a number as the old library's English printer did:
// its float, digits grouped by thousands; one the float cannot hold
// (1e400, 1e-400) as written.
func (n jnum) display() string {
	if d, ok := decimalOf(n.text()); math.IsInf(n.f, 0) || n.f == 0 && ok && d.digits != "" {
		return n.text()
	}
	f := n.f
	if f == 0 {
		f = 0 // -0 shows as 0
	}
	return groupDigits(strconv.FormatFloat(f, 'g', -1, 64))
}

// groupDigits puts thousands separators in a number's whole part.
func groupDigits(s string) string {
	if strings.ContainsAny(s, "eE") {
		return s
	}
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	if len(whole) <= 3 {
		return sign + s
	}
	var b strings.Builder
	b.WriteString(sign)
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if hasFrac {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

func itoa(i int) string { return groupDigits(strconv.Itoa(i)) }
