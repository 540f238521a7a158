package jsonschema

// What a failure says: compile errors at the keyword's pointer, and the
// violations' wording, the old library's English.

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp/syntax"
	"strconv"
	"strings"
)

// schemaError is a compile error: the pointer of the keyword at fault
// and what is wrong with it.
type schemaError struct {
	ptr, msg string
}

func (e *schemaError) Error() string {
	p := e.ptr
	if p == "" {
		p = "/"
	}
	return p + ": " + e.msg
}

// regexpProblem is the reason regexp gives, without repeating the pattern.
func regexpProblem(err error) string {
	var re *syntax.Error
	if errors.As(err, &re) {
		return re.Code.String()
	}
	return err.Error()
}

func enumMessage(enum []any) string {
	want := make([]string, len(enum))
	for i, e := range enum {
		switch e.(type) {
		case []any, map[string]any:
			return "'enum' failed"
		}
		want[i] = display(e)
	}
	if len(want) == 1 {
		return "value must be " + want[0]
	}
	return "value must be one of " + strings.Join(want, ", ")
}

func containsMessage(which string, want int, matched []int) string {
	if len(matched) == 0 {
		return fmt.Sprintf("%s %s items required to match contains schema, but none matched", which, itoa(want))
	}
	at := make([]string, len(matched))
	for i, m := range matched {
		at[i] = itoa(m)
	}
	return fmt.Sprintf("%s %s items required to match contains schema, but matched %s items at %s", which, itoa(want), itoa(len(matched)), strings.Join(at, " "))
}

// quote renders a string in single quotes, as the old library's messages did.
func quote(s string) string {
	s = strconv.Quote(s)
	s = strings.ReplaceAll(s, `\"`, `"`)
	s = strings.ReplaceAll(s, `'`, `\'`)
	return "'" + s[1:len(s)-1] + "'"
}

func joinQuoted(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = quote(s)
	}
	return strings.Join(q, ", ")
}

// display renders a primitive value for a message.
func display(v any) string {
	switch v := v.(type) {
	case string:
		return quote(v)
	case []any, map[string]any:
		return "value"
	case nil:
		return "<nil>"
	case json.Number:
		return string(v)
	}
	return fmt.Sprint(v)
}
