package reliability

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelwire/modelwire/cli"
)

// TestProxySafety: the proxy listens on loopback unless told otherwise,
// forwards only to the upstream it was configured with whatever the
// request names, and passes request and response bytes unchanged.
func TestProxySafety(t *testing.T) {
	tried, held := 0, 0
	check := func(ok bool, format string, args ...any) {
		tried++
		if ok {
			held++
		} else {
			t.Errorf(format, args...)
		}
	}

	// Loopback by default: the proxy's and the simulator's listen flags.
	root := cli.NewRoot(&cli.App{Out: io.Discard, Err: io.Discard, In: strings.NewReader("")})
	for _, c := range []struct{ cmd, flag string }{{"proxy", "listen"}, {"serve", "addr"}} {
		sub, _, err := root.Find([]string{c.cmd})
		if err != nil {
			t.Fatal(err)
		}
		def := sub.Flags().Lookup(c.flag).DefValue
		host, _, _ := net.SplitHostPort(def)
		check(net.ParseIP(host).IsLoopback(), "%s --%s defaults to %q: not loopback", c.cmd, c.flag, def)
	}

	// An upstream that was configured, and a host that was not.
	cs, upstream := newChatStream(t, 500, 0)
	var evilHits atomic.Int64
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		evilHits.Add(1)
		w.WriteHeader(200)
	}))
	defer evil.Close()
	evilHost := strings.TrimPrefix(evil.URL, "http://")

	path := filepath.Join(t.TempDir(), "safety.db")
	cmd, base, exited := startProxy(t, path, "--upstream", upstream+"/v1")
	proxyAddr := strings.TrimPrefix(base, "http://")
	host, _, _ := net.SplitHostPort(proxyAddr)
	check(net.ParseIP(host).IsLoopback(), "the proxy listens on %s", proxyAddr)

	// Requests that name the other host every way HTTP allows: absolute
	// form (as to a forward proxy), Host header, CONNECT, a path that looks
	// like a URL.
	raw := func(req string) string {
		c, err := net.DialTimeout("tcp", proxyAddr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(c).ReadString('\n')
		return strings.TrimSpace(line)
	}
	body := chatRequest("safety")
	for _, req := range []string{
		fmt.Sprintf("POST http://%s/v1/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nX-Test-Events: 3\r\n\r\n%s", evilHost, evilHost, len(body), body),
		fmt.Sprintf("POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nX-Test-Events: 3\r\n\r\n%s", evilHost, len(body), body),
		fmt.Sprintf("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", evilHost, evilHost),
		fmt.Sprintf("GET //%s/steal HTTP/1.1\r\nHost: %s\r\n\r\n", evilHost, evilHost),
		fmt.Sprintf("GET http://%s/steal HTTP/1.1\r\nHost: %s\r\n\r\n", evilHost, evilHost),
	} {
		status := raw(req)
		first, _, _ := strings.Cut(req, "\r\n")
		check(evilHits.Load() == 0, "%q reached the unconfigured host (proxy answered %q)", first, status)
		check(!strings.HasPrefix(first, "CONNECT") || !strings.Contains(status, " 200"), "CONNECT was tunnelled: %q", status)
	}

	// Bytes unchanged: a request body and the response, by SHA-256.
	rng := rand.New(rand.NewPCG(7, 7))
	for i, b := range [][]byte{[]byte(chatRequest("bytes")), randomBytes(rng, 256<<10)} {
		prev, _ := cs.hashes()
		before := len(prev)
		req, _ := http.NewRequest("POST", base+"/v1/chat/completions", bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Test-Events", "200")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		reqs, outs := cs.hashes()
		check(len(reqs) == before+1 && reqs[len(reqs)-1] == sha256.Sum256(b), "request %d: the upstream got other bytes than the app sent", i)
		check(len(outs) > 0 && outs[len(outs)-1] == sha256.Sum256(got), "request %d: the app got other bytes than the upstream sent", i)
	}
	stopProxy(t, cmd, exited)

	// Without --upstream a path modelwire does not know goes nowhere.
	cmd, base, exited = startProxy(t, filepath.Join(t.TempDir(), "noup.db"))
	resp, err := http.Get(base + "/steal?to=" + evilHost)
	if err == nil {
		resp.Body.Close()
		check(resp.StatusCode == http.StatusBadGateway && evilHits.Load() == 0, "an unknown path without --upstream: HTTP %d, %d hits elsewhere", resp.StatusCode, evilHits.Load())
	} else {
		t.Error(err)
	}
	stopProxy(t, cmd, exited)
	addFigure(figure{area: "proxy safety", what: "loopback default, unconfigured hosts refused, bytes unchanged (SHA-256)", tried: tried, held: held, lost: tried - held,
		note: "absolute-form, Host header, CONNECT, //host paths; JSON and 256 KiB binary bodies"})
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.UintN(256))
	}
	return b
}
