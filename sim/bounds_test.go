package sim_test

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/sim"
)

// A client that sends headers and then trickles nothing of its body gets
// 408 once BodyTimeout passes, and a server at MaxConns accepts no more
// until one closes (issue 29).
func TestBodyTimeoutAndMaxConns(t *testing.T) {
	base := start(t, "", sim.Options{BodyTimeout: 200 * time.Millisecond, MaxConns: 1})
	addr := strings.TrimPrefix(base, "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = c.Write([]byte("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"))

	// The one connection is taken: a second waits.
	second := make(chan int, 1)
	go func() {
		resp, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
		if err != nil {
			second <- -1
			return
		}
		resp.Body.Close()
		second <- resp.StatusCode
	}()
	select {
	case code := <-second:
		t.Fatalf("second connection served (%d) while the first held the only slot", code)
	case <-time.After(100 * time.Millisecond):
	}

	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("trickled body: %d, want 408", resp.StatusCode)
	}
	c.Close()
	select {
	case code := <-second:
		if code <= 0 {
			t.Fatalf("second connection: %d", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("second connection never served after the first closed")
	}
}
