package jsonschema

// JSON values as the validator sees them: their types, and JSON equality
// for const, enum and uniqueItems.

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"math"
	"sort"
)

// typeBit is the JSON type of a decoded value, 0 when it is not JSON.
func typeBit(v any) uint8 {
	switch v := v.(type) {
	case nil:
		return tNull
	case bool:
		return tBoolean
	case string:
		return tString
	case []any:
		return tArray
	case map[string]any:
		return tObject
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0
		}
		return tNumber
	case float32:
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return 0
		}
		return tNumber
	case json.Number, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return tNumber
	}
	return 0
}

var typeNames = map[uint8]string{tNull: "null", tBoolean: "boolean", tNumber: "number", tString: "string", tArray: "array", tObject: "object"}

func typeName(bit uint8) string {
	if bit == tInteger {
		return "integer"
	}
	return typeNames[bit]
}

func jsonTypeName(v any) string {
	if name, ok := typeNames[typeBit(v)]; ok {
		return name
	}
	return fmt.Sprintf("%T", v)
}

// equal is JSON equality: numbers by value, objects without order.
func equal(a, b any) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case bool:
		b, ok := b.(bool)
		return ok && a == b
	case string:
		b, ok := b.(string)
		return ok && a == b
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !equal(a[i], b[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, x := range a {
			y, ok := b[k]
			if !ok || !equal(x, y) {
				return false
			}
		}
		return true
	}
	x, ok1 := numberOf(a)
	y, ok2 := numberOf(b)
	return ok1 && ok2 && x.cmp(y) == 0
}

// duplicate finds the first pair of equal items, (-1, -1) when none.
// Long arrays are bucketed by a hash that equal values share.
func duplicate(arr []any) (int, int) {
	if len(arr) <= 20 {
		for i := 1; i < len(arr); i++ {
			for j := 0; j < i; j++ {
				if equal(arr[i], arr[j]) {
					return j, i
				}
			}
		}
		return -1, -1
	}
	seed := maphash.MakeSeed()
	seen := make(map[uint64][]int, len(arr))
	var h maphash.Hash
	for i, x := range arr {
		h.SetSeed(seed)
		hashValue(&h, x)
		sum := h.Sum64()
		for _, j := range seen[sum] {
			if equal(x, arr[j]) {
				return j, i
			}
		}
		seen[sum] = append(seen[sum], i)
	}
	return -1, -1
}

// hashValue hashes a value so that equal values hash alike: numbers by
// their float (equal numbers round to the same one), objects by sorted key.
func hashValue(h *maphash.Hash, v any) {
	switch v := v.(type) {
	case nil:
		h.WriteByte(0)
	case bool:
		h.WriteByte(1)
		if v {
			h.WriteByte(1)
		}
	case string:
		h.WriteByte(2)
		h.WriteString(v)
		h.WriteByte(0)
	case []any:
		h.WriteByte(3)
		for _, x := range v {
			hashValue(h, x)
		}
		h.WriteByte(0)
	case map[string]any:
		h.WriteByte(4)
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			h.WriteString(k)
			h.WriteByte(0)
			hashValue(h, v[k])
		}
		h.WriteByte(0)
	default:
		h.WriteByte(5)
		if n, ok := numberOf(v); ok {
			f := n.f
			if f == 0 {
				f = 0 // -0 and 0 are one number
			}
			var b [8]byte
			bits := math.Float64bits(f)
			for i := range b {
				b[i] = byte(bits >> (8 * i))
			}
			h.Write(b[:])
		}
	}
}
