package store

import (
	"database/sql/driver"
	"fmt"

	"github.com/klauspost/compress/s2"
	"modernc.org/sqlite"
)

// Chunk codecs (migration 0004): how a chunk row's steps and raws are
// stored.
const (
	codecPlain = 0 // as written: the steps' JSON text, the raws' bytes
	codecS2    = 1 // each an S2 block of those bytes
)

// maxChunkDecoded bounds what one chunk row may decode to: a chunk closes
// at maxChunkBytes, past which only one step can take it, and no step is
// larger than a whole body the proxy or an import decodes (64 MiB by
// default, configurable well below this).
const maxChunkDecoded = 1 << 30

// chunkCodec is the codec new chunk rows are written with.
const chunkCodec = codecS2

// compressChunk appends the S2 block of src to dst[:0], reusing dst's
// memory when it is large enough.
func compressChunk(dst, src []byte) []byte {
	if n := s2.MaxEncodedLen(len(src)); cap(dst) < n {
		dst = make([]byte, n)
	}
	return s2.Encode(dst[:cap(dst)], src)
}

// decodeChunkColumn returns a chunk column's bytes as written.
func decodeChunkColumn(b []byte, codec int) ([]byte, error) { return decodeChunkInto(nil, b, codec) }

// decodeChunkInto is decodeChunkColumn decompressing into dst when it is
// large enough (a pass over many chunks reuses one buffer).
func decodeChunkInto(dst, b []byte, codec int) ([]byte, error) {
	switch codec {
	case codecPlain:
		return b, nil
	case codecS2:
		if b == nil {
			return nil, nil
		}
		// The decoded length is the row's own word: a damaged or crafted
		// row must not make a reader allocate what it claims.
		if n, err := s2.DecodedLen(b); err == nil && n > maxChunkDecoded {
			return nil, fmt.Errorf("store: a chunk is damaged: it claims %d bytes decoded, more than the %d any chunk holds", n, maxChunkDecoded)
		}
		out, err := s2.Decode(dst[:cap(dst)], b)
		if err != nil {
			return nil, fmt.Errorf("store: a chunk is damaged: %w", err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("store: a chunk has codec %d, unknown to this modelwire", codec)
}

// The content search matches LIKE patterns against a chunk's steps text,
// which a compressed row holds only as S2: modelwire_chunk_steps(steps,
// codec) is that text, whatever the codec.
func init() {
	sqlite.MustRegisterDeterministicScalarFunction("modelwire_chunk_steps", 2, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		codec, _ := args[1].(int64)
		var b []byte
		switch v := args[0].(type) {
		case []byte:
			b = v
		case string:
			b = []byte(v)
		case nil:
			return nil, nil
		}
		out, err := decodeChunkColumn(b, int(codec))
		if err != nil {
			return nil, err
		}
		return string(out), nil
	})
}
