package ui

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/sjson"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/workshop"
)

// TestE2ERoom runs `serve --workshop refund-3` as a room, sends three
// participants' first requests (one right, one offering no tools, one
// without the output schema), then drives `modelwire room URL --token T`
// in tmux at 80×24: the three rows with their grades, then enter on bob's
// row opens his failing check, its hint and the shape the step expects.
func TestE2ERoom(t *testing.T) {
	dir := t.TempDir()
	bin := e2eBinary(t)
	db := filepath.Join(dir, "mw.db")
	serve := exec.Command(bin, "serve", "--workshop", "refund-3", "--addr", "127.0.0.1:0", "--db", db)
	out, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	serve.Stderr = os.Stderr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = serve.Process.Kill(); _ = serve.Wait() })
	banner := bufio.NewReader(out)
	var url, token string
	tokenRe := regexp.MustCompile(`modelwire room (\S+) --token ([0-9a-f]+)`)
	for token == "" {
		line, err := banner.ReadString('\n')
		if err != nil {
			t.Fatalf("reading serve's banner: %v", err)
		}
		if m := tokenRe.FindStringSubmatch(line); m != nil {
			url, token = m[1], m[2]
		}
	}

	p, err := registry.Lookup(adapters.OpenAIResponses)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := samples.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	first, err := p.Encode(sc.Request(false, adapters.HistoryFull), adapters.ProviderSim)
	if err != nil {
		t.Fatal(err)
	}
	noTools, _ := sjson.DeleteBytes(first.Body, "tools")
	noSchema, _ := sjson.DeleteBytes(first.Body, "text")
	for _, who := range []struct {
		name string
		body []byte
	}{{"alice", first.Body}, {"bob", noTools}, {"carol", noSchema}} {
		req, _ := http.NewRequest(http.MethodPost, url+first.Path, bytes.NewReader(who.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer sk-"+who.name+"-0123456789")
		req.Header.Set("X-Modelwire-Participant", who.name)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get(workshop.GradeHeader), "step=1 ") {
			t.Fatalf("%s: %d %q", who.name, resp.StatusCode, resp.Header.Get(workshop.GradeHeader))
		}
	}

	tm := &tmux{t: t, name: fmt.Sprintf("mwroom%d", os.Getpid()), sock: filepath.Join(dir, "tmux.sock"), w: 80, h: 24}
	t.Cleanup(tm.kill)
	tm.start(bin, db, dir, "room", url, "--token", token)
	s := tm.waitFor("the three rows", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "alice") && strings.Contains(s, "bob") && strings.Contains(s, "carol")
	})
	rows := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		for _, n := range []string{"alice", "bob", "carol"} {
			if strings.Contains(line, n) {
				rows[n] = line
			}
		}
	}
	for n, want := range map[string][]string{"alice": {"1", "5/5", "all pass"}, "bob": {"1", "3/5", "tools-read-only"}, "carol": {"1", "4/5", "output-schema"}} {
		for _, w := range want {
			if !strings.Contains(rows[n], w) {
				t.Errorf("%s's row %q lacks %q", n, rows[n], w)
			}
		}
	}
	if !strings.Contains(s, "3 participants · most on step 1 (3)") {
		t.Errorf("the summary:\n%s", s)
	}
	tm.send("Down")
	tm.send("Enter")
	s = tm.waitFor("bob's detail", 10*time.Second, func(s string) bool { return strings.Contains(s, "expected shape (first-turn)") })
	for _, want := range []string{"bob · step 1", "✗ tools-read-only", "§13.6.3", "只提供三个只读查询工具", "tools: []", "o opens it"} {
		if !strings.Contains(s, want) {
			t.Errorf("bob's detail lacks %q:\n%s", want, s)
		}
	}
	// o opens bob's recorded session in the workbench's replay; q there
	// comes back to the room.
	id := regexp.MustCompile(`session ([0-9a-z]{12}):`).FindStringSubmatch(s)
	if id == nil {
		t.Fatalf("no session id in bob's detail:\n%s", s)
	}
	tm.send("o")
	tm.waitFor("bob's session in the replay", 20*time.Second, func(s string) bool { return strings.Contains(s, "modelwire replay "+id[1]) })
	tm.send("q")
	tm.waitFor("the room again", 10*time.Second, func(s string) bool { return strings.Contains(s, "expected shape (first-turn)") })
	tm.send("q")
	tm.waitExit(10 * time.Second)
}
