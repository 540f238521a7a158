package store

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
)

const crashChildEnv = "MODELWIRE_STORE_CRASH_CHILD"

// TestCrashChild is the child process of TestSIGKILLMidStream: it records
// one endless stream into the database named by the environment and
// prints the last committed entry after every commit.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashChildEnv)
	if path == "" {
		t.Skip("helper process of TestSIGKILLMidStream")
	}
	db, err := Open(path)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	db.w.mu.Lock()
	db.w.afterCommit = func(last map[int64]int) {
		for _, seq := range last {
			fmt.Printf("committed %d\n", seq)
		}
	}
	db.w.mu.Unlock()
	w, err := db.CreateSession(SessionMeta{Title: "crash", Protocol: adapters.OpenAIChat, Provider: "sim"})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	fmt.Printf("session %s\n", w.ID())
	rec, err := w.StartAttempt(1, AttemptMeta{Method: "POST", URL: "http://127.0.0.1/v1/chat/completions", Stream: true})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	l := newLiveStream(adapters.OpenAIChat)
	rec.Append(l.step(sse("", `{"id":"c1"}`), adapters.Event{Type: adapters.EvResponseStarted, ResponseID: "c1"},
		adapters.Event{Type: adapters.EvItemStarted, ItemID: "m", Kind: "message"}))
	deadline := time.Now().Add(time.Minute)
	for i := 0; time.Now().Before(deadline); i++ {
		d := fmt.Sprintf("w%d ", i)
		if err := rec.Append(l.step(sse("", `{"d":"`+d+`"}`), adapters.Event{Type: adapters.EvTextDelta, ItemID: "m", Delta: d})); err != nil {
			fmt.Println("error", err)
			os.Exit(3)
		}
		time.Sleep(100 * time.Microsecond)
	}
	os.Exit(4)
}

// TestSIGKILLMidStream kills a process in the middle of recording a stream
// and checks what survives: an intact database, every entry up to the last
// commit the child reported, and the session listed as interrupted. While
// the child runs, this process browses the same database and sees the
// session running.
func TestSIGKILLMidStream(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()

	sc := bufio.NewScanner(out)
	lastCommitted, id := 0, ""
	browsed := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "session "):
			id = strings.TrimPrefix(line, "session ")
		case strings.HasPrefix(line, "committed "):
			lastCommitted, _ = strconv.Atoi(strings.TrimPrefix(line, "committed "))
		case strings.HasPrefix(line, "error"):
			t.Fatalf("child: %s", line)
		}
		if lastCommitted > 300 && !browsed {
			// A second process reads while the first one writes.
			b, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			list, err := b.ListSessions(Filter{})
			if err != nil || len(list) != 1 || list[0].Status != StatusRunning {
				t.Errorf("while the writer lives: %+v, %v", list, err)
			}
			b.Close()
			browsed = true
		}
		if lastCommitted > 1500 && browsed {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed = true
	cmd.Wait()
	// Commits reported after the last line read may have happened too.
	for sc.Scan() {
		if s, ok := strings.CutPrefix(sc.Text(), "committed "); ok {
			lastCommitted, _ = strconv.Atoi(s)
		}
	}
	if id == "" {
		t.Fatal("the child never reported its session")
	}

	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.sql.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check = %q, %v", check, err)
	}
	list, err := db.ListSessions(Filter{})
	if err != nil || len(list) != 1 || list[0].ID != id || list[0].Status != StatusInterrupted {
		t.Fatalf("after the kill: %+v, %v", list, err)
	}
	entries, err := db.Events(id, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < lastCommitted {
		t.Fatalf("%d entries survive, but %d were committed", len(entries), lastCommitted)
	}
	var text strings.Builder
	for i, e := range entries {
		if e.Seq != i+1 {
			t.Fatalf("entry %d has seq %d", i+1, e.Seq)
		}
		if ev, ok, _ := e.Canonical(); ok && ev.Type == adapters.EvTextDelta {
			text.WriteString(ev.Delta)
		}
	}
	s, err := db.GetSession(id)
	if err != nil || s.Attempts[0].State != StatusInterrupted || s.Events != len(entries) {
		t.Errorf("session %+v, %v", s, err)
	}
	st, err := db.StateAt(id, len(entries))
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Items) != 1 || st.Items[0].Text != text.String() || st.Items[0].State != adapters.ItemStreaming || st.Done {
		t.Errorf("state at the last entry: %d items, done %v", len(st.Items), st.Done)
	}
	t.Logf("%d entries committed before the kill, %d survive", lastCommitted, len(entries))
}
