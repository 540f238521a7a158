package proxy

// Small readers and formatters the exchange's recording uses.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/validate"
)

// readCapped reads r to its end and keeps the first max bytes (as valid
// text); n is how many there were.
func readCapped(r io.Reader, max int) (string, int64) {
	var b bytes.Buffer
	n, _ := io.Copy(&b, io.LimitReader(r, int64(max)))
	rest, _ := io.Copy(io.Discard, r)
	return strings.ToValidUTF8(b.String(), "\uFFFD"), n + rest
}

// transportText names how a response's body ended early.
func transportText(err error, forwarded int64) string {
	if errors.Is(err, ErrRecorderBehind) {
		return err.Error()
	}
	return fmt.Sprintf("the stream broke after %d bytes: %v", forwarded, err)
}

// lazyReader opens its reader on first use (gzip.NewReader reads the
// header, which must happen on the recording goroutine).
type lazyReader struct {
	open func() (io.Reader, error)
	r    io.Reader
	err  error
}

func (l *lazyReader) Read(p []byte) (int, error) {
	if l.r == nil && l.err == nil {
		l.r, l.err = l.open()
	}
	if l.err != nil {
		return 0, l.err
	}
	return l.r.Read(p)
}

func jsonOrNil(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return json.RawMessage(b)
}

func jsonMarshal(v any) ([]byte, error) { return adapters.MarshalBody(v) }

// oneLine is validate.OneLine over the first few lines of s, not the
// fields of a whole body.
func oneLine(s string, n int) string { return validate.OneLine(headOf(s, 8*n), n) }
