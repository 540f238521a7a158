package store

import (
	"github.com/modelwire/modelwire/adapters"
)

// TurnRecord is one turn of a stored session as the prompt-debugging loop
// needs it (fork, diff, the VCR): the attempt that answered it (the last
// one), the response rebuilt by the same reducer replay uses, and the tool
// calls it proposed with their decisions and results.
type TurnRecord struct {
	Turn    int
	Attempt Attempt
	// Attempts counts the turn's attempts (retries included).
	Attempts int
	// Summary and Items are the last attempt's response; zero when it
	// decoded nothing (an HTTP error, a connection that failed).
	Summary adapters.Summary
	Items   []adapters.Item
	Calls   []Call
}

// History is the turn as conversation history: the model's closed items
// and the results fed back to it, by call_id.
func (t TurnRecord) History() adapters.Turn {
	h := adapters.Turn{ResponseID: t.Summary.ResponseID}
	for _, it := range t.Items {
		if it.Kind == adapters.KindToolCall && it.State != adapters.ItemParsed {
			continue // a call that never closed was never proposed
		}
		oi := adapters.OutputItem{Kind: it.Kind, ID: it.ID, CallID: it.CallID, Name: it.Name, Text: it.Text, Signature: it.Signature}
		if it.Kind == adapters.KindToolCall {
			oi.Text, oi.Arguments = "", it.Arguments
		}
		h.Items = append(h.Items, oi)
	}
	for _, c := range t.Calls {
		if c.HasResult {
			h.Results = append(h.Results, adapters.ToolResult{CallID: c.CallID, Name: c.Name, Content: c.Result, IsError: c.IsError})
		}
	}
	return h
}

// Turns reads a session turn by turn, in turn order. The session's
// metadata comes with it.
func (db *DB) Turns(id string) (*Session, []TurnRecord, error) {
	s, err := db.GetSession(id)
	if err != nil {
		return nil, nil, err
	}
	byTurn := map[int]*TurnRecord{}
	var out []*TurnRecord
	for _, a := range s.Attempts {
		t := byTurn[a.Turn]
		if t == nil {
			t = &TurnRecord{Turn: a.Turn}
			byTurn[a.Turn] = t
			out = append(out, t)
		}
		t.Attempt = a // attempts come in order: the last one answered the turn
		t.Attempts++
	}
	cur, err := db.NewCursor(id)
	if err != nil {
		return nil, nil, err
	}
	recs := make([]TurnRecord, 0, len(out))
	for _, t := range out {
		if t.Attempt.LastSeq > 0 {
			st, err := cur.Seek(t.Attempt.LastSeq)
			if err != nil {
				return nil, nil, err
			}
			t.Summary, t.Items = st.Summary, st.Items
		}
		for _, c := range s.Calls {
			if c.Turn == t.Turn {
				t.Calls = append(t.Calls, c)
			}
		}
		recs = append(recs, *t)
	}
	return s, recs, nil
}

// FinalValidations are the verdicts the session ended with: the last set
// recorded (a regeneration records the failed answer's set first).
func (s *Session) FinalValidations() []Validation {
	if len(s.Validations) == 0 {
		return nil
	}
	last := s.Validations[len(s.Validations)-1].Seq
	var out []Validation
	for _, v := range s.Validations {
		if v.Seq == last {
			out = append(out, v.Validation)
		}
	}
	return out
}
