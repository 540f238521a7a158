package proxy

import (
	"encoding/json"
	"time"

	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/timeline"
)

// journal writes one update of exchange x through the conversation's
// journal — timeline.StoreJournal, the one every session records through.
// An attempt carries the exchange's own request as it was forwarded (its
// method, headers, body, stream flag and retry reason).
func (x *exchange) journal(j *timeline.StoreJournal, u session.Update) error {
	if u.Kind == session.UpAttempt {
		return j.RecordAttempt(u, store.AttemptMeta{Protocol: x.protocolName(), Method: x.method, URL: u.URL,
			Header: x.recHeader, Body: x.recBody, Stream: x.req.stream, RetryReason: x.retryReason})
	}
	return j.Record(u)
}

// validJSON is b when it is JSON, else nil.
func validJSON(b json.RawMessage) json.RawMessage {
	if len(b) == 0 || !json.Valid(b) {
		return nil
	}
	return b
}

// sinceMS is the time from t0 to t in float milliseconds.
func sinceMS(t0, t time.Time) float64 { return float64(t.Sub(t0).Microseconds()) / 1000 }
