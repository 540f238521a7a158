package store

import "errors"

// TagTitle puts tag in front of session id's title ("[tag] title"), so a
// person reading the list, and --search, see what produced the session
// (`modelwire proxy -- CMD` tags its sessions with the command). The tag
// is redacted as every title is; a title that already begins with it is
// left as it is.
func (db *DB) TagTitle(id, tag string) error {
	if db.w == nil {
		return errors.New("store: the database is open read-only")
	}
	prefix := "[" + Redact(tag) + "] "
	return db.w.exec(func(t *txn) error {
		return t.exec(`UPDATE sessions SET title = ? || title WHERE id = ? AND substr(title, 1, length(?)) <> ?`,
			prefix, id, prefix, prefix)
	})
}
