package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelwire/modelwire/adapters"
)

// Session-level entries of the timeline.

// DecisionKind is what was decided about a proposed call; the session's
// gate and every front end name decisions by these.
type DecisionKind string

// Decision kinds. Auto is a decision recorded without a decider (an
// imported transcript's call, which ran).
const (
	DecisionApproved DecisionKind = "approved"
	DecisionEdited   DecisionKind = "edited"
	DecisionRejected DecisionKind = "rejected"
	DecisionAuto     DecisionKind = "auto"
)

// Decision is what was decided about one proposed tool call.
type Decision struct {
	Turn   int
	CallID string
	Name   string
	// Decision is approved, edited, rejected or auto.
	Decision DecisionKind
	// Arguments are the model's original arguments; Edited the arguments
	// a person replaced them with (decision edited).
	Arguments json.RawMessage
	Edited    json.RawMessage
	Reason    string
	At        time.Time // defaults to now
}

// ToolResult is the result sent back for one call.
type ToolResult struct {
	Turn    int
	CallID  string
	Name    string
	Content string
	IsError bool
	At      time.Time // defaults to now
}

// Validation is one layer's verdict.
type Validation struct {
	Layer  string  `json:"layer"`
	Status Verdict `json:"status"`
	Detail string  `json:"detail"`
}

// decisionEvent is the timeline entry of a decision. Arguments are the
// ones the tool runs with (the edited ones when edited).
type decisionEvent struct {
	Type              string          `json:"type"`
	Turn              int             `json:"turn"`
	CallID            string          `json:"call_id"`
	Name              string          `json:"name"`
	Decision          DecisionKind    `json:"decision"`
	Arguments         json.RawMessage `json:"arguments,omitempty"`
	OriginalArguments json.RawMessage `json:"original_arguments,omitempty"`
	Reason            string          `json:"reason,omitempty"`
	At                time.Time       `json:"at"`
}

type resultEvent struct {
	Type    string    `json:"type"`
	Turn    int       `json:"turn"`
	CallID  string    `json:"call_id"`
	Name    string    `json:"name"`
	IsError bool      `json:"is_error"`
	Content string    `json:"content"`
	At      time.Time `json:"at"`
}

type validationEvent struct {
	Type    string       `json:"type"`
	Turn    int          `json:"turn"`
	Results []Validation `json:"results"`
	At      time.Time    `json:"at"`
}

// Session-level entry types.
const (
	EntryDecision   = "tool.decision"
	EntryToolResult = "tool.result"
	EntryValidation = "validation"
)

// RecordDecision records a decision on a proposed call and commits it
// with everything recorded before it. Like Append, a failed commit keeps
// the entry queued for the next one: do not record it again.
func (s *SessionWriter) RecordDecision(d Decision) error {
	return s.recordDecision(d, s.sessionOffset(), nil)
}

// recordDecision records d at offset off; body, when not nil, is the
// entry as an import read it, kept byte for byte.
func (s *SessionWriter) recordDecision(d Decision, off time.Duration, body []byte) error {
	switch d.Decision {
	case DecisionApproved, DecisionEdited, DecisionRejected, DecisionAuto:
	default:
		return fmt.Errorf("store: decision %q: want approved, edited, rejected or auto", d.Decision)
	}
	if d.CallID == "" {
		return errors.New("store: a decision needs the call_id")
	}
	if d.Decision == DecisionEdited && len(d.Edited) == 0 {
		return errors.New("store: an edited decision needs the edited arguments")
	}
	for _, raw := range []json.RawMessage{d.Arguments, d.Edited} {
		if len(raw) > 0 && !json.Valid(raw) {
			return fmt.Errorf("store: decision on %s: arguments are not valid JSON", d.CallID)
		}
	}
	if d.At.IsZero() {
		d.At = time.Now()
	}
	if body == nil {
		ev := decisionEvent{Type: EntryDecision, Turn: d.Turn, CallID: d.CallID, Name: d.Name, Decision: d.Decision,
			Arguments: compactJSON(d.Arguments), Reason: d.Reason, At: d.At.UTC()}
		if len(d.Edited) > 0 {
			ev.Arguments, ev.OriginalArguments = compactJSON(d.Edited), compactJSON(d.Arguments)
		}
		var err error
		if body, err = encodeEntry(ev); err != nil {
			return err
		}
	}
	ls, orig, edited := s.ls, nullText(compactJSON(d.Arguments)), nullText(compactJSON(d.Edited))
	return s.sessionEntry(d.Turn, off, body, func(seq int) execOp {
		return func(t *txn) error {
			return t.exec(`INSERT INTO tool_calls (sid, turn, call_id, name, arguments, decision, edited_arguments, reason, decided_at, decision_seq)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (sid, turn, call_id) DO UPDATE SET decision = excluded.decision,
				edited_arguments = excluded.edited_arguments, reason = excluded.reason, decided_at = excluded.decided_at,
				decision_seq = excluded.decision_seq, name = CASE WHEN tool_calls.name = '' THEN excluded.name ELSE tool_calls.name END,
				arguments = coalesce(tool_calls.arguments, excluded.arguments)`,
				ls.sid, d.Turn, d.CallID, d.Name, orig, d.Decision, edited, d.Reason, d.At.UnixMilli(), seq)
		}
	})
}

// RecordToolResult records the result sent back for a call and commits
// it with everything recorded before it.
func (s *SessionWriter) RecordToolResult(r ToolResult) error {
	return s.recordToolResult(r, s.sessionOffset(), nil)
}

func (s *SessionWriter) recordToolResult(r ToolResult, off time.Duration, body []byte) error {
	if r.CallID == "" {
		return errors.New("store: a tool result needs the call_id")
	}
	if r.At.IsZero() {
		r.At = time.Now()
	}
	if body == nil {
		var err error
		if body, err = encodeEntry(resultEvent{Type: EntryToolResult, Turn: r.Turn, CallID: r.CallID, Name: r.Name,
			IsError: r.IsError, Content: r.Content, At: r.At.UTC()}); err != nil {
			return err
		}
	}
	ls := s.ls // ls.sid read when the entry is written: a copy's is set by the batch
	return s.sessionEntry(r.Turn, off, body, func(seq int) execOp {
		return func(t *txn) error {
			return t.exec(`INSERT INTO tool_calls (sid, turn, call_id, name, result, is_error, result_at, result_seq)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (sid, turn, call_id) DO UPDATE SET result = excluded.result, is_error = excluded.is_error,
				result_at = excluded.result_at, result_seq = excluded.result_seq,
				name = CASE WHEN tool_calls.name = '' THEN excluded.name ELSE tool_calls.name END`,
				ls.sid, r.Turn, r.CallID, r.Name, r.Content, r.IsError, r.At.UnixMilli(), seq)
		}
	})
}

// RecordValidation records the layers' verdicts for a turn (0 for the
// session as a whole) and commits them with everything before them.
func (s *SessionWriter) RecordValidation(turn int, results []Validation) error {
	return s.recordValidation(turn, results, time.Now(), s.sessionOffset(), nil)
}

func (s *SessionWriter) recordValidation(turn int, results []Validation, at time.Time, off time.Duration, body []byte) error {
	// A detail may quote a transport error, which quotes the URL.
	results = append([]Validation{}, results...)
	for i := range results {
		results[i].Detail = Redact(results[i].Detail)
	}
	if body != nil {
		body = []byte(Redact(string(body)))
	}
	for _, v := range results {
		if !v.Status.Valid() {
			return fmt.Errorf("store: validation layer %q: status %q, want pass, fail or skip", v.Layer, v.Status)
		}
	}
	if body == nil {
		var err error
		if body, err = encodeEntry(validationEvent{Type: EntryValidation, Turn: turn, Results: results, At: at.UTC()}); err != nil {
			return err
		}
	}
	ls := s.ls
	return s.sessionEntry(turn, off, body, func(seq int) execOp {
		return func(t *txn) error {
			for i, v := range results {
				if _, err := t.w.insertValRow.ExecContext(t.ctx, ls.sid, seq, i, turn, v.Layer, v.Status, v.Detail); err != nil {
					return err
				}
			}
			return nil
		}
	})
}

// sessionEntry appends one session-level timeline entry with its table
// write, and commits (a person's decision is kept the moment it is made),
// unless the session is a copy (SessionMeta.Copy).
func (s *SessionWriter) sessionEntry(turn int, off time.Duration, body []byte, table func(seq int) execOp) error {
	ls := s.ls
	_, err := s.db.w.append(ls, 1, !ls.batchEntries, func(seq int, b []op) []op {
		return append(b,
			&stepOp{ls: ls, seq: seq, n: 1, turn: turn, offsetUS: off.Microseconds(), rawIndex: -1, events: body},
			table(seq))
	})
	return err
}

// encodeEntry encodes a session-level entry as a one-element array, the
// shape of a step's events.
func encodeEntry(v any) ([]byte, error) { return adapters.MarshalBody([]any{v}) }

func compactJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

func nullText(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return string(raw)
}
