package store

import (
	"errors"
	"time"
)

// CallRef names one tool call of a session.
type CallRef struct {
	Turn   int
	CallID string
}

// CopyTurns copies the turns of session src before turn `before` into the
// session w is writing — its attempts with their raw and canonical events
// and timings, the decisions and the tool results — so that a fork holds
// the history it was forked from and replays, exports and diffs as a whole.
// results replaces the content of the named calls' results (the fork's
// edits; a call by turn and call_id, since Gemini numbers its ids afresh
// in each turn); the verdicts are not copied (the fork is judged on its own).
func (db *DB) CopyTurns(w *SessionWriter, src string, before int, results map[CallRef]string) error {
	s, err := db.GetSession(src)
	if err != nil {
		return err
	}
	imp := NewRestorer(w)
	for _, a := range s.Attempts {
		if a.Turn >= before {
			continue
		}
		if a.State == StatusRunning {
			a.State = StatusInterrupted
		}
		if err := imp.Attempt(a); err != nil {
			return err
		}
	}
	it, err := db.sessionSteps(src)
	if err != nil {
		return err
	}
	defer it.close()
	for st := it.next(); st != nil && st.Seq <= s.Events; st = it.next() {
		if st.Turn >= before || st.Turn == 0 || len(st.Events) == 0 && st.Attempt == 0 {
			continue
		}
		if st.Attempt == 0 {
			entry, err := parseSessionEntry(st.Events[0])
			if err != nil {
				return err
			}
			switch e := entry.(type) {
			case validationEvent:
				continue // a regeneration's verdict on an inherited answer belongs to the parent
			case resultEvent:
				if content, ok := results[CallRef{Turn: e.Turn, CallID: e.CallID}]; ok {
					r := ToolResult{Turn: e.Turn, CallID: e.CallID, Name: e.Name, Content: content, IsError: e.IsError, At: e.At}
					if err := w.recordToolResult(r, time.Duration(st.OffsetUS)*time.Microsecond, nil); err != nil {
						return err
					}
					continue
				}
			}
		} else if !imp.Has(st.Turn, st.Attempt) {
			return errors.New("store: a step of an attempt that is not there")
		}
		if err := imp.Step(st); err != nil {
			return err
		}
	}
	if err := it.close(); err != nil {
		return err
	}
	return imp.FinishAttempts()
}
