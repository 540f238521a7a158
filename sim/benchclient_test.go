package sim_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
)

// The benchmark's load client: HTTP/1.1 over one keep-alive connection per
// client goroutine, each request's bytes built once, each response read in
// the goroutine that sent it. net/http's client hands every response
// between its connection's read goroutine and the caller, and that
// scheduling was about a third of the benchmark's CPU (a profile of the
// client process): on two cores shared with the server, the ratio of two
// servers was partly measuring the client. The same client loads both
// servers.

// rawRequests are a loop's requests as bytes on the wire, for one server.
func rawRequests(base, protocol string, loop []*adapters.HTTPRequest) ([][]byte, error) {
	out := make([][]byte, len(loop))
	for i, w := range loop {
		req, err := http.NewRequest(w.Method, session.Provider{BaseURL: base}.URL(w.Path), bytes.NewReader(w.Body))
		if err != nil {
			return nil, err
		}
		for k, v := range w.Headers {
			req.Header.Set(k, v)
		}
		session.Provider{Key: "sim-key"}.Authorize(req.Header, protocol)
		var b bytes.Buffer
		if err := req.Write(&b); err != nil {
			return nil, err
		}
		out[i] = b.Bytes()
	}
	return out, nil
}

// benchConn is one client connection; it dials again after the server
// closed it.
type benchConn struct {
	addr string
	c    net.Conn
	r    *bufio.Reader
	body []byte // the last response's body, its buffer reused
}

// do sends one request and reads its whole response: the status code, and
// the body in c.body (chunked or with a length, or up to the close).
func (c *benchConn) do(req []byte) (int, error) {
	if c.c == nil {
		conn, err := net.Dial("tcp", c.addr)
		if err != nil {
			return 0, err
		}
		c.c = conn
		c.r = bufio.NewReaderSize(conn, 64<<10)
	}
	status, keep, err := c.roundTrip(req)
	if err != nil || !keep {
		c.close()
	}
	return status, err
}

func (c *benchConn) close() {
	if c.c != nil {
		_ = c.c.Close()
		c.c = nil
	}
}

func (c *benchConn) roundTrip(req []byte) (status int, keep bool, err error) {
	if _, err := c.c.Write(req); err != nil {
		return 0, false, err
	}
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return 0, false, err
	}
	// "HTTP/1.1 200 OK"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, false, fmt.Errorf("bad status line %q", line)
	}
	if status, err = strconv.Atoi(string(line[9:12])); err != nil {
		return 0, false, fmt.Errorf("bad status line %q", line)
	}
	length, chunked, keep := -1, false, line[7] == '1'
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return status, false, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return status, false, fmt.Errorf("bad header line %q", line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil {
				return status, false, fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			keep = !bytes.EqualFold(value, []byte("close"))
		}
	}
	c.body = c.body[:0]
	switch {
	case chunked:
		err = c.readChunked()
	case length >= 0:
		err = c.readN(length)
	default: // the body ends with the connection
		keep = false
		var b bytes.Buffer
		_, err = io.Copy(&b, c.r)
		c.body = b.Bytes()
	}
	return status, keep && err == nil, err
}

func (c *benchConn) readN(n int) error {
	start := len(c.body)
	c.body = slices.Grow(c.body, n)[:start+n]
	_, err := io.ReadFull(c.r, c.body[start:])
	return err
}

func (c *benchConn) readChunked() error {
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return err
		}
		size, _, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(";"))
		n, err := strconv.ParseUint(string(size), 16, 31)
		if err != nil {
			return fmt.Errorf("bad chunk size %q", line)
		}
		if n == 0 {
			break
		}
		if err := c.readN(int(n)); err != nil {
			return err
		}
		if err := c.crlf(); err != nil {
			return err
		}
	}
	for { // trailers, up to the empty line
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(bytes.TrimRight(line, "\r\n")) == 0 {
			return nil
		}
	}
}

func (c *benchConn) crlf() error {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return err
	}
	if len(bytes.TrimRight(line, "\r\n")) != 0 {
		return errors.New("a chunk longer than its size")
	}
	return nil
}
