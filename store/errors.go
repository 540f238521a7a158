package store

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinels for the reasons a database cannot be opened. An *OpenError
// wraps one of them, so errors.Is works on the error Open returns.
var (
	ErrNotSQLite    = errors.New("not a SQLite database")
	ErrNotModelwire = errors.New("not a modelwire database")
	ErrNewerSchema  = errors.New("schema newer than this modelwire")
	ErrCorrupt      = errors.New("database is corrupt")
	ErrReadOnly     = errors.New("location is read-only")
	ErrIsDirectory  = errors.New("is a directory")
	// ErrCannotOpen is any other reason (a missing file opened
	// read-only, a driver error).
	ErrCannotOpen = errors.New("cannot open")
)

// OpenError says why the database at Path cannot be used. When Open
// returns one, the file has not been changed.
type OpenError struct {
	Path string
	// Kind is one of the sentinels above.
	Kind error
	// Have and Want are the file's schema version and this modelwire's,
	// for ErrNewerSchema.
	Have, Want int
	// Err is the underlying cause, when there is one.
	Err error
}

func (e *OpenError) Error() string {
	switch e.Kind {
	case ErrNotSQLite:
		return fmt.Sprintf("%s is not a SQLite database", e.Path)
	case ErrNotModelwire:
		return fmt.Sprintf("%s is a SQLite database but not a modelwire database", e.Path)
	case ErrNewerSchema:
		return fmt.Sprintf("%s has schema version %d, newer than this modelwire (%d); upgrade modelwire to open it", e.Path, e.Have, e.Want)
	case ErrCorrupt:
		return fmt.Sprintf("%s is corrupt: %v", e.Path, e.Err)
	case ErrReadOnly:
		return fmt.Sprintf("cannot write %s: %v (is the location read-only?)", e.Path, e.Err)
	case ErrIsDirectory:
		return fmt.Sprintf("%s is a directory, not a database file", e.Path)
	}
	return fmt.Sprintf("cannot open %s: %v", e.Path, e.Err)
}

// Unwrap lets errors.Is match the kind and the cause.
func (e *OpenError) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Kind}
}

// NotFoundError is returned for a session id or prefix that matches
// nothing.
type NotFoundError struct{ ID string }

func (e *NotFoundError) Error() string { return fmt.Sprintf("no session %q in this database", e.ID) }

// AmbiguousError is returned for a prefix that matches several sessions.
type AmbiguousError struct {
	Prefix  string
	Matches []string // the first few
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("session prefix %q is ambiguous: it matches %s", e.Prefix, strings.Join(e.Matches, ", "))
}

// InputError reports a malformed import file: the line (JSONL, 1-based)
// or the entry (HAR, 0-based index into log.entries) at fault.
type InputError struct {
	File  string
	Line  int // 0 when not line-based
	Entry int // -1 when not about one HAR entry
	Msg   string
}

func (e *InputError) Error() string {
	name := e.File
	if name == "" {
		name = "input"
	}
	switch {
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", name, e.Line, e.Msg)
	case e.Entry >= 0:
		return fmt.Sprintf("%s: log.entries[%d]: %s", name, e.Entry, e.Msg)
	}
	return fmt.Sprintf("%s: %s", name, e.Msg)
}

// DamagedError says a stored session names more than it holds (a turn or
// a count past its entries): a file damaged or crafted. Reading it stops
// there rather than allocate what the number asks for.
type DamagedError struct {
	ID     string
	Detail string
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("session %s is damaged: %s", e.ID, e.Detail)
}
