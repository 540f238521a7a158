package session

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/modelwire/modelwire/jsonschema"
)

// A variant is a named edit of the case's prompt — a sentence taken out
// of the rules, a label changed, a schema loosened — not a flag inside a
// model: the simulated model reads the edited request and goes wrong for
// a reason a person can see in the words (assemble and the workbench's
// compare view show them).

// Edit is one change a variant makes to the scenario document before it
// is read. A source edit replaces words of one source's text (and may
// change its trust label); a pointer edit sets any member of the document
// (a tool's schema, the output contract, a limit) to a JSON value.
type Edit struct {
	// Source is the id of the source whose text changes: every
	// occurrence of Find becomes Replace.
	Source  string `json:"source,omitempty"`
	Find    string `json:"find,omitempty"`
	Replace string `json:"replace,omitempty"`
	// Trust gives the source another trust label.
	Trust string `json:"trust,omitempty"`
	// Pointer is a JSON pointer into the scenario document; the member
	// there is set to Value (its parent must exist).
	Pointer string          `json:"pointer,omitempty"`
	Value   json.RawMessage `json:"value,omitempty"`
}

// String is the edit as a person reads it.
func (e Edit) String() string {
	if e.Source != "" {
		var parts []string
		if e.Find != "" {
			parts = append(parts, fmt.Sprintf("%q → %q", e.Find, e.Replace))
		}
		if e.Trust != "" {
			parts = append(parts, "trust → "+e.Trust)
		}
		return e.Source + ": " + strings.Join(parts, ", ")
	}
	return fmt.Sprintf("%s → %s", e.Pointer, strings.TrimSpace(string(e.Value)))
}

// applyEdits returns the scenario document with a variant's edits made;
// an edit that cannot be made (an unknown source, words the source does
// not have, a pointer to nowhere) is an error naming the edit.
func applyEdits(file string, data []byte, variant string, edits []Edit) ([]byte, error) {
	out := data
	for i, e := range edits {
		at := fmt.Sprintf("/variants/%s/edits/%d", jsonschema.EscapeToken(variant), i)
		var err error
		switch {
		case e.Source != "" && e.Pointer == "":
			out, err = editSource(out, e)
		case e.Pointer != "" && e.Source == "" && len(e.Value) > 0:
			out, err = editPointer(out, e)
		default:
			err = fmt.Errorf("an edit has a source (with find and replace, or trust) or a pointer with a value")
		}
		if err != nil {
			return nil, &ScenarioError{File: file, Pointer: at, Problem: err.Error()}
		}
	}
	return out, nil
}

func editSource(doc []byte, e Edit) ([]byte, error) {
	idx := -1
	for i, s := range gjson.GetBytes(doc, "sources").Array() {
		if s.Get("id").String() == e.Source {
			idx = i
			break
		}
	}
	if idx < 0 {
		return nil, fmt.Errorf("no source %q", e.Source)
	}
	base := "sources." + strconv.Itoa(idx)
	if e.Find != "" {
		text := gjson.GetBytes(doc, base+".text").String()
		if !strings.Contains(text, e.Find) {
			return nil, fmt.Errorf("source %s does not say %q", e.Source, e.Find)
		}
		var err error
		if doc, err = sjson.SetBytes(doc, base+".text", strings.ReplaceAll(text, e.Find, e.Replace)); err != nil {
			return nil, err
		}
	} else if e.Trust == "" {
		return nil, fmt.Errorf("a source edit needs find (and replace) or trust")
	}
	if e.Trust != "" {
		return sjson.SetBytes(doc, base+".trust", e.Trust)
	}
	return doc, nil
}

// pathEscaper escapes the characters gjson and sjson paths give meaning.
var pathEscaper = strings.NewReplacer(`\`, `\\`, ".", `\.`, "*", `\*`, "?", `\?`, "|", `\|`, "#", `\#`, "@", `\@`)

func editPointer(doc []byte, e Edit) ([]byte, error) {
	if !json.Valid(e.Value) {
		return nil, fmt.Errorf("value is not JSON")
	}
	if !strings.HasPrefix(e.Pointer, "/") || e.Pointer == "/" {
		return nil, fmt.Errorf("pointer %q: want a member such as /output/strict", e.Pointer)
	}
	var path, parent []string
	toks := strings.Split(e.Pointer[1:], "/")
	for i, t := range toks {
		t = jsonschema.UnescapeToken(t)
		// gjson/sjson paths: escape their own syntax; a number names an
		// array element, or an object member when the parent is one.
		esc := pathEscaper.Replace(t)
		if _, err := strconv.Atoi(t); err == nil && !gjson.GetBytes(doc, strings.Join(path, ".")).IsArray() {
			esc = ":" + esc
		}
		if i < len(toks)-1 {
			parent = append(parent, esc)
		}
		path = append(path, esc)
	}
	if len(parent) > 0 && !gjson.GetBytes(doc, strings.Join(parent, ".")).Exists() {
		return nil, fmt.Errorf("pointer %s: its parent is not in the scenario", e.Pointer)
	}
	return sjson.SetRawBytes(doc, strings.Join(path, "."), e.Value)
}
