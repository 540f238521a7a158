package proxy

import (
	"errors"
	"fmt"
	"io"

	"github.com/modelwire/modelwire/adapters"
)

// The readers that keep a recording within its bounds: a decompressor
// stopped when it inflates past --max-inflate, a stream's recording ended
// past --max-stream-text (the application is still served whole).

// countingReader counts the bytes read through it (the compressed side
// of a decompressor).
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// streamCap ends a stream's recording once the content its events
// carried (count) passes max bytes.
type streamCap struct {
	r      io.Reader
	n, max int64
	over   string // set: the recording ends, with this reason
}

// count adds the content of a step's events.
func (c *streamCap) count(evs []adapters.Event) {
	for i := range evs {
		c.n += int64(len(evs[i].Delta))
		if f := evs[i].Final; f != nil {
			c.n += int64(len(*f))
		}
	}
}

func (c *streamCap) Read(p []byte) (int, error) {
	if c.over != "" {
		return 0, errors.New(c.over)
	}
	if c.n > c.max {
		return 0, fmt.Errorf("the stream's content passed %d bytes (--max-stream-text): too large to record whole; the rest was forwarded, not recorded", c.max)
	}
	return c.r.Read(p)
}

// tooLargeError ends a decompression that inflated past its bound.
type tooLargeError struct{ in, out, ratio int64 }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("the body inflated from %d to over %d bytes, more than %d times (--max-inflate): a decompression bomb, too large to decode; forwarded, not decoded",
		e.in, e.out, e.ratio)
}

// inflateGuard stops a decompressor whose output outgrows its input by
// more than the ratio (past inflateFloor): the recorder never inflates a
// bomb, whether the body is whole or a stream.
type inflateGuard struct {
	in    *countingReader
	r     io.Reader
	out   int64
	ratio int64
	err   error
}

// inflated guards a decompressor reading from in.
func (x *exchange) inflated(in *countingReader, r io.Reader) io.Reader {
	return &inflateGuard{in: in, r: r, ratio: x.p.opts.MaxInflate}
}

func (g *inflateGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.r.Read(p)
	g.out += int64(n)
	if g.out > inflateFloor && g.out > g.ratio*g.in.n {
		g.err = &tooLargeError{in: g.in.n, out: g.out, ratio: g.ratio}
		return n, g.err
	}
	return n, err
}
