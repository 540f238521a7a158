package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"slices"
)

// EachEntryContaining calls fn, in order, for the entries of the chunks of
// session id whose stored events contain any of texts (as stored: JSON),
// and only those: a pass for rare events (diagnostics, proposals) that
// decodes only the chunks that hold them, the others only searched
// (bytes.Index, in the driver's buffer, decompressed first where the
// chunk is). fn sees the chunks' other
// entries too and picks its own.
func (db *DB) EachEntryContaining(id string, texts []string, fn func(Entry) error) error {
	ctx := context.Background()
	sid, err := db.sid(ctx, id)
	if err != nil {
		return err
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT steps, `+db.chunkCodec()+` FROM chunks WHERE sid = ? ORDER BY seq`, sid)
	if err != nil {
		return err
	}
	defer rows.Close()
	var buf []byte // one buffer for the decompressed chunks: the pass makes no garbage a chunk
	for rows.Next() {
		var stored sql.RawBytes // valid until the next row: searched in place
		var codec int
		if err := rows.Scan(&stored, &codec); err != nil {
			return err
		}
		// A compressed chunk (schema 4) is searched as the JSON it holds.
		steps, err := decodeChunkInto(buf, stored, codec)
		if err != nil {
			return err
		}
		if codec != codecPlain {
			buf = steps
		}
		if !slices.ContainsFunc(texts, func(t string) bool { return bytes.Contains(steps, []byte(t)) }) {
			continue
		}
		for _, el := range splitArray(steps) {
			var s StoredStep // decoding copies what it keeps out of steps
			if err := json.Unmarshal(el, &s); err != nil {
				return err
			}
			for i := range s.Entries() {
				if err := fn(s.entry(i)); err != nil {
					return err
				}
			}
		}
	}
	return rows.Err()
}
