package sim_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/transport"
)

// The benchmark's load client: HTTP/1.1 over one keep-alive connection per
// client goroutine, each request's bytes built once, each response read in
// the goroutine that sent it. net/http's client hands every response
// between its connection's read goroutine and the caller, and that
// scheduling was about a third of the benchmark's CPU (a profile of the
// client process): on two cores shared with the server, the ratio of two
// servers was partly measuring the client. The same client loads both
// servers.

// benchConns is how many connections load a server at once
// (MODELWIRE_BENCH_CONNS): enough to keep a server busy on both cores
// while requests and responses are on the wire.
var benchConns = func() int {
	if n, err := strconv.Atoi(os.Getenv("MODELWIRE_BENCH_CONNS")); err == nil && n > 0 {
		return n
	}
	return 8
}()

// benchClient loads one server with one loop.
type benchClient struct {
	srv   server
	loop  []*adapters.HTTPRequest
	reqs  [][]byte
	conns []*benchConn
	// requests sent, the time they took and the server's CPU time,
	// summed over the runs since reset
	requests int
	elapsed  time.Duration
	cpu      time.Duration
}

func newBenchClient(srv server, l benchLoop) (*benchClient, error) {
	reqs, err := rawRequests(srv.base, l.protocol, l.requests)
	if err != nil {
		return nil, err
	}
	c := &benchClient{srv: srv, loop: l.requests, reqs: reqs}
	for range benchConns {
		c.conns = append(c.conns, &benchConn{addr: strings.TrimPrefix(srv.base, "http://")})
	}
	return c, nil
}

// run sends the loop n times from all connections at once and adds the
// time it took and the server's CPU time to the totals.
func (c *benchClient) run(n int) error {
	var next atomic.Int64
	errs := make(chan error, len(c.conns))
	cpu, start := c.srv.cpuTime(), time.Now()
	for _, conn := range c.conns {
		go func() {
			for next.Add(1) <= int64(n) {
				for i := range c.reqs {
					status, err := conn.do(c.reqs[i])
					if err == nil && status != http.StatusOK {
						err = fmt.Errorf("%d %.300s", status, conn.body)
					}
					if err != nil {
						errs <- fmt.Errorf("%s %s %s: %w", c.srv.base, c.loop[i].Method, c.loop[i].Path, err)
						return
					}
				}
			}
			errs <- nil
		}()
	}
	var first error
	for range c.conns {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	c.elapsed += time.Since(start)
	c.cpu += c.srv.cpuTime() - cpu
	c.requests += n * len(c.reqs)
	return first
}

// reset forgets the runs so far.
func (c *benchClient) reset() { c.requests, c.elapsed, c.cpu = 0, 0, 0 }

// rate is the requests a second of the runs.
func (c *benchClient) rate() float64 { return float64(c.requests) / c.elapsed.Seconds() }

// serverMicros is the server's CPU time per request, in µs (0 where
// there is no /proc).
func (c *benchClient) serverMicros() float64 {
	return float64(c.cpu.Microseconds()) / float64(c.requests)
}

func (c *benchClient) close() {
	for _, conn := range c.conns {
		conn.close()
	}
}

// rawRequests are a loop's requests as bytes on the wire, for one server.
func rawRequests(base, protocol string, loop []*adapters.HTTPRequest) ([][]byte, error) {
	out := make([][]byte, len(loop))
	for i, w := range loop {
		req, err := http.NewRequest(w.Method, transport.Provider{BaseURL: base}.URL(w.Path), bytes.NewReader(w.Body))
		if err != nil {
			return nil, err
		}
		for k, v := range w.Headers {
			req.Header.Set(k, v)
		}
		transport.Provider{Key: "sim-key"}.Authorize(req.Header, protocol)
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
