package jsonl

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/store"
)

// A crafted turn number of 2·10⁹ is refused at import, in a JSONL
// export, before anything is written (the HAR half is har's).
func TestImportRefusesHugeTurns(t *testing.T) {
	db, _ := openTemp(t)
	src, _ := openTemp(t)
	id := fullSession(t, src)
	var out bytes.Buffer
	if err := Export(src, &out, id); err != nil {
		t.Fatal(err)
	}
	huge := strings.ReplaceAll(out.String(), `"turn":1,"attempt":1,`, `"turn":2000000000,"attempt":1,`)
	if huge == out.String() {
		t.Fatal("no attempt line to alter")
	}
	_, err := Import(db, strings.NewReader(huge), "huge.jsonl")
	var ie *store.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "can exceed") {
		t.Errorf("JSONL: %v", err)
	}
	if list, _ := db.ListSessions(store.Filter{}); len(list) != 0 {
		t.Errorf("%d sessions written", len(list))
	}
}
