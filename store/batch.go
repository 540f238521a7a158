package store

import "strings"

// SourceBatch is an imported batch's request: one session per custom_id
// (the batch package).
const SourceBatch = "batch"

// BatchTitle is the title of a batch request's session: the batch's id
// (or, without the batch object, its input file's name) and the batch's
// status as a tag, then the request's custom_id — "[batch_abc · completed]
// req-1". --search finds a whole batch by its id; Batch reads it back.
func BatchTitle(batch, status, customID string) string {
	tag := batch
	if status != "" {
		tag += batchSep + status
	}
	return "[" + tag + "] " + customID
}

const batchSep = " · "

// Batch is the batch a session is a request of, the batch's status ("" when
// the import was not given the batch object) and the request's custom_id;
// ok is false for a session that is not a batch's.
func (s SessionInfo) Batch() (batch, status, customID string, ok bool) {
	if s.Source != SourceBatch || !strings.HasPrefix(s.Title, "[") {
		return "", "", "", false
	}
	tag, customID, ok := strings.Cut(s.Title[1:], "] ")
	if !ok {
		return "", "", "", false
	}
	batch, status, _ = strings.Cut(tag, batchSep)
	return batch, status, customID, true
}
