package stats

import "testing"

func TestSizeBucket(t *testing.T) {
	for n, want := range map[int64]string{0: "0–255", 255: "0–255", 256: "256–1023", 4095: "1024–4095", 4096: "4096–16383",
		262143: "65536–262143", 1<<20 - 1: "262144–1048575", 1 << 20: "1048576+", 1 << 40: "1048576+"} {
		if got := sizeBucket(n); got != want {
			t.Errorf("sizeBucket(%d) = %q, want %q", n, got, want)
		}
	}
	if compareValue("unknown", "0–255") <= 0 || compareValue("9", "10") >= 0 || compareValue("b", "a") <= 0 {
		t.Error("numbers first and in numeric order, then the rest as strings")
	}
}
