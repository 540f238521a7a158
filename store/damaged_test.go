package store

import (
	"errors"
	"testing"
)

// A crafted turn number or count is refused before anything is sized by
// it: reading the session says it is damaged.
func TestCraftedTurnIsDamaged(t *testing.T) {
	for _, q := range []string{`UPDATE attempts SET turn = 2000000000`, `UPDATE sessions SET turns = 2000000000`,
		`UPDATE sessions SET events = 2000000000`, `UPDATE validations SET turn = -5`} {
		t.Run(q, func(t *testing.T) {
			db, _ := openTemp(t)
			w, _ := record(t, db, refundMeta(), refundStream())
			if err := w.RecordValidation(1, []Validation{{"transport", "pass", ""}}); err != nil {
				t.Fatal(err)
			}
			if err := w.Finish(StatusDone); err != nil {
				t.Fatal(err)
			}
			if _, err := db.GetSession(w.ID()); err != nil {
				t.Fatalf("the session as recorded: %v", err)
			}
			if _, err := db.sql.Exec(q); err != nil {
				t.Fatal(err)
			}
			_, err := db.GetSession(w.ID())
			var damaged *DamagedError
			if !errors.As(err, &damaged) {
				t.Fatalf("after %s: %v, want a DamagedError", q, err)
			}
		})
	}
}
