// Package store keeps every modelwire session in SQLite (modernc.org/sqlite,
// pure Go) so that it can be listed, replayed event by event, exported and
// imported later. It knows nothing of the UI or of the session engine: the
// engine writes through a SessionWriter and its Recorders, the UI and the
// commands read through DB.
//
// Writes are batched: a Recorder appends steps (a raw event and the
// canonical events derived from it) to an in-memory batch that is committed
// in one transaction every FlushInterval, at every terminal event and before
// every decision, tool result, validation and state change. After a crash
// the database keeps everything up to the last commit, and the session shows
// as interrupted. Secrets in URLs, headers and error texts are redacted on
// the way in, whatever the caller passes.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// applicationID marks a SQLite file as modelwire's ("mwdb").
const applicationID = 0x6d776462

// SchemaVersion is the schema this modelwire writes: the number of the last
// migration.
var SchemaVersion = lastMigration()

// DefaultFlushInterval is how long an appended event may wait in memory
// before it is committed.
const DefaultFlushInterval = 50 * time.Millisecond

// Options tune Open.
type Options struct {
	// ReadOnly opens an existing database for reading only: no migration,
	// no crash sweep (sessions whose writer is gone are reported as
	// interrupted without being changed), no writes.
	ReadOnly bool
	// FlushInterval overrides DefaultFlushInterval.
	FlushInterval time.Duration
}

// DB is an open modelwire database. It is safe for concurrent use.
type DB struct {
	path     string
	sql      *sql.DB // the read pool (and the writer's connection)
	readOnly bool
	token    string // this handle's writer token (see proc.go)
	// schema is the file's schema version: SchemaVersion once migrated;
	// a read-only handle reads older files as they are.
	schema int

	w *writer // nil when read-only

	closeOnce sync.Once
}

// Open opens (creating it and its directory if needed) the database at
// path, migrates it and marks sessions whose writer died as interrupted.
func Open(path string) (*DB, error) { return OpenWith(path, Options{}) }

// OpenWith is Open with options.
func OpenWith(path string, o Options) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &OpenError{Path: path, Kind: ErrReadOnly, Err: err}
	}
	if err := checkFile(path, abs, o.ReadOnly); err != nil {
		return nil, err
	}
	removeNew := sidecarsCleanup(abs)
	schema, err := checkSchema(path, abs)
	if err != nil {
		removeNew()
		return nil, err
	}

	params := []string{"_pragma=busy_timeout(10000)", "_pragma=foreign_keys(1)"}
	if o.ReadOnly {
		params = append(params, "mode=ro")
	} else {
		// 4 KiB pages (SQLite's default, set explicitly): a compressed
		// chunk row is ~5–10 KB, and a commit writes whole pages of every
		// table and index it touches (the attempt's row, the session's),
		// so larger pages write more: 16 KiB pages wrote 2.3× the bytes of
		// 4 KiB ones to the WAL for the same 300,000 events. It only
		// applies to a new file, before migrate turns on the WAL (the
		// driver runs _pragma sorted, which would put journal_mode
		// first); an existing file keeps its page size. synchronous=NORMAL is safe in WAL
		// mode: a commit is appended to the WAL without an fsync, which
		// comes at each checkpoint; a power cut can lose the last commits
		// but never corrupts the file, and a process crash loses nothing
		// committed (the crash tests kill the writer).
		params = append(params, "_pragma=page_size(4096)", "_pragma=synchronous(NORMAL)")
	}
	pool, err := sql.Open("sqlite", dsn(abs, params...))
	if err != nil {
		return nil, &OpenError{Path: path, Kind: ErrCannotOpen, Err: err}
	}
	pool.SetMaxOpenConns(8)
	pool.SetMaxIdleConns(4)
	db := &DB{path: path, sql: pool, readOnly: o.ReadOnly, token: newWriterToken(), schema: schema}
	fail := func(err error) (*DB, error) {
		db.Close()
		removeNew()
		return nil, classify(path, err)
	}
	if !o.ReadOnly {
		if err := db.migrate(); err != nil {
			return fail(err)
		}
		db.schema = SchemaVersion
		iv := o.FlushInterval
		if iv <= 0 {
			iv = DefaultFlushInterval
		}
		w, err := newWriter(db, iv)
		if err != nil {
			return fail(err)
		}
		db.w = w
		registerLive(db.token)
		if _, err := db.sweep(context.Background()); err != nil {
			return fail(err)
		}
	} else if err := pool.Ping(); err != nil {
		if !unwritableDir(err) {
			return fail(err)
		}
		// A WAL database in a directory this process cannot write: SQLite
		// cannot make the -shm file even to read. Nobody else can write
		// there either, so the file is read as immutable.
		pool.Close()
		if pool, err = sql.Open("sqlite", dsn(abs, append(params, "immutable=1")...)); err != nil {
			return nil, &OpenError{Path: path, Kind: ErrCannotOpen, Err: err}
		}
		pool.SetMaxOpenConns(8)
		db.sql = pool
		if err := pool.Ping(); err != nil {
			return fail(err)
		}
	}
	return db, nil
}

// unwritableDir: err is SQLite unable to make a file beside the database
// (SQLITE_READONLY_DIRECTORY, or CANTOPEN for the -shm).
func unwritableDir(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	return se.Code() == sqlite3.SQLITE_READONLY_DIRECTORY || se.Code()&0xff == sqlite3.SQLITE_CANTOPEN ||
		se.Code() == sqlite3.SQLITE_READONLY_CANTINIT
}

// Path is the path the database was opened with.
func (db *DB) Path() string { return db.path }

// ReadOnly reports whether the database was opened read-only.
func (db *DB) ReadOnly() bool { return db.readOnly }

// Flush commits what this handle has queued, so that its own reads (an
// export of a session still being written) see every event it was given.
func (db *DB) Flush() error {
	if db.w == nil {
		return nil
	}
	return db.w.flush()
}

// Close commits what is pending, marks the sessions this handle was still
// writing as interrupted (they never got their FinishSession), and closes
// the database.
func (db *DB) Close() error {
	var err error
	db.closeOnce.Do(func() {
		if db.w != nil {
			err = db.w.close()
			unregisterLive(db.token)
		}
		if cerr := db.sql.Close(); err == nil {
			err = cerr
		}
	})
	return err
}

// dsn builds a file: URI for abs with query parameters.
func dsn(abs string, params ...string) string {
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	return "file:" + r.Replace(filepath.ToSlash(abs)) + "?" + strings.Join(params, "&")
}

// checkFile looks at the file before SQLite does, so that a file that is
// not ours is reported without being touched, and a location that cannot be
// written is reported as such.
func checkFile(path, abs string, readOnly bool) error {
	st, err := os.Stat(abs)
	switch {
	case err == nil && st.IsDir():
		return &OpenError{Path: path, Kind: ErrIsDirectory}
	case err == nil:
		f, err := os.Open(abs)
		if err != nil {
			return &OpenError{Path: path, Kind: ErrReadOnly, Err: unwrapPath(err)}
		}
		head := make([]byte, 16)
		n, _ := io.ReadFull(f, head)
		f.Close()
		if n > 0 && (n < 16 || string(head) != "SQLite format 3\x00") {
			return &OpenError{Path: path, Kind: ErrNotSQLite}
		}
		if !readOnly {
			f, err := os.OpenFile(abs, os.O_RDWR, 0)
			if err != nil {
				return &OpenError{Path: path, Kind: ErrReadOnly, Err: unwrapPath(err)}
			}
			f.Close()
		}
		return nil
	case errors.Is(err, fs.ErrNotExist):
		if readOnly {
			return &OpenError{Path: path, Kind: ErrCannotOpen, Err: fs.ErrNotExist}
		}
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return &OpenError{Path: path, Kind: ErrReadOnly, Err: unwrapPath(err)}
		}
		f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return &OpenError{Path: path, Kind: ErrReadOnly, Err: unwrapPath(err)}
		}
		if f != nil {
			f.Close()
		}
		return nil
	default:
		return &OpenError{Path: path, Kind: ErrReadOnly, Err: unwrapPath(err)}
	}
}

// checkSchema opens the file read-only, without any pragma that would
// change it, decides whether it is ours and not from the future, and
// returns its schema version (0 for an empty file).
func checkSchema(path, abs string) (int, error) {
	ro, err := sql.Open("sqlite", dsn(abs, "mode=ro", "_pragma=busy_timeout(10000)"))
	if err != nil {
		return 0, &OpenError{Path: path, Kind: ErrCannotOpen, Err: err}
	}
	defer func() { ro.Close() }()
	var app, version, tables int
	const q = `SELECT (SELECT application_id FROM pragma_application_id),
		(SELECT user_version FROM pragma_user_version),
		(SELECT count(*) FROM sqlite_schema)`
	err = ro.QueryRow(q).Scan(&app, &version, &tables)
	if err != nil && unwritableDir(err) { // see OpenWith: read it as immutable
		ro.Close()
		if ro, err = sql.Open("sqlite", dsn(abs, "mode=ro", "immutable=1")); err != nil {
			return 0, &OpenError{Path: path, Kind: ErrCannotOpen, Err: err}
		}
		err = ro.QueryRow(q).Scan(&app, &version, &tables)
	}
	if err != nil {
		return 0, classify(path, err)
	}
	switch {
	case app == applicationID && version > SchemaVersion:
		return 0, &OpenError{Path: path, Kind: ErrNewerSchema, Have: version, Want: SchemaVersion}
	case app == applicationID:
		return version, nil
	case app != 0 || tables > 0:
		return 0, &OpenError{Path: path, Kind: ErrNotModelwire}
	}
	return 0, nil // an empty database: ours to initialise
}

// sidecarsCleanup notes which of SQLite's -wal and -shm files exist beside
// the database and returns a function that removes the ones that did not:
// an open that fails (a corrupt file, one that is not ours) leaves the
// directory as it found it.
func sidecarsCleanup(abs string) func() {
	var created []string
	for _, p := range []string{abs + "-wal", abs + "-shm"} {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			created = append(created, p)
		}
	}
	return func() {
		for _, p := range created {
			_ = os.Remove(p)
		}
	}
}

// classify turns a SQLite error met while opening into an OpenError.
func classify(path string, err error) error {
	var oe *OpenError
	if errors.As(err, &oe) {
		return err
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB:
			return &OpenError{Path: path, Kind: ErrNotSQLite, Err: err}
		case sqlite3.SQLITE_CORRUPT:
			return &OpenError{Path: path, Kind: ErrCorrupt, Err: err}
		case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM:
			return &OpenError{Path: path, Kind: ErrReadOnly, Err: err}
		}
	}
	return &OpenError{Path: path, Kind: ErrCannotOpen, Err: err}
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// migration is one numbered .sql file.
type migration struct {
	version int
	name    string
}

func migrations() []migration {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		panic(err) // embedded: cannot fail
	}
	var out []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			panic("store: badly named migration " + e.Name())
		}
		out = append(out, migration{version: v, name: e.Name()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			panic(fmt.Sprintf("store: migrations must be numbered 1, 2, …; found %s", m.name))
		}
	}
	return out
}

// walMode turns on the WAL. Switching a new file's journal needs an
// exclusive lock, and when two processes open the file at once both hold a
// shared lock and want it: SQLite answers one of them SQLITE_BUSY at once,
// without its busy handler (waiting would deadlock), so we wait here, as
// long as the busy timeout, for the other to finish.
func walMode(ctx context.Context, conn *sql.Conn) error {
	deadline := time.Now().Add(10 * time.Second)
	for pause := time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		_, err := conn.ExecContext(ctx, "PRAGMA journal_mode=WAL")
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().After(deadline) {
			return err
		}
		time.Sleep(pause)
	}
}

func lastMigration() int {
	ms := migrations()
	return ms[len(ms)-1].version
}

// migrate applies the migrations the file lacks, each in its own
// transaction together with the new user_version. BEGIN IMMEDIATE takes the
// write lock first, so two processes opening a new file at once do not both
// migrate it.
func (db *DB) migrate() error {
	ctx := context.Background()
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// The WAL persists in the file; set here, after the page size.
	if err := walMode(ctx, conn); err != nil {
		return err
	}
	for _, m := range migrations() {
		if err := func() (err error) {
			if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
				return err
			}
			defer func() {
				if err != nil {
					_, _ = conn.ExecContext(ctx, "ROLLBACK")
				}
			}()
			var have int
			if err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err != nil {
				return err
			}
			if have > SchemaVersion {
				return &OpenError{Path: db.path, Kind: ErrNewerSchema, Have: have, Want: SchemaVersion}
			}
			if have >= m.version {
				_, err := conn.ExecContext(ctx, "COMMIT")
				return err
			}
			body, err := migrationFS.ReadFile("migrations/" + m.name)
			if err != nil {
				return err
			}
			if _, err := conn.ExecContext(ctx, string(body)); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d; PRAGMA user_version = %d", applicationID, m.version)); err != nil {
				return err
			}
			_, err = conn.ExecContext(ctx, "COMMIT")
			return err
		}(); err != nil {
			return err
		}
	}
	return nil
}

// FlushInterval is how long an appended event may wait before it is
// committed (zero for a read-only handle).
func (db *DB) FlushInterval() time.Duration {
	if db.w == nil {
		return 0
	}
	return db.w.interval
}
