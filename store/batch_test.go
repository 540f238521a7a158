package store

import "testing"

func TestBatchTitleRoundTrip(t *testing.T) {
	for _, c := range [][3]string{{"batch_abc", "completed", "req-1"}, {"requests.jsonl", "", "a] b"}, {"batch_x", "failed", "请求-1"}} {
		s := SessionInfo{Source: SourceBatch, Title: BatchTitle(c[0], c[1], c[2])}
		b, st, id, ok := s.Batch()
		if !ok || b != c[0] || st != c[1] || id != c[2] {
			t.Errorf("%q: Batch() = %q %q %q %v, want %v", s.Title, b, st, id, ok, c)
		}
	}
	if _, _, _, ok := (SessionInfo{Source: SourceHAR, Title: "[batch_abc · completed] req-1"}).Batch(); ok {
		t.Error("a HAR session read as a batch's")
	}
}
