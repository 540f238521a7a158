package store

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// A running session records who writes it: the writer's pid and a token
// "pid/start/handle", where start identifies the process instance (on Linux
// the boot id and the process start time, so a reused pid is not mistaken
// for the writer) and handle identifies one open DB in that process. A
// session is interrupted when its writer is gone: another process that no
// longer exists (or is a different process under the same pid), or this
// process with the handle closed.

var live sync.Map // tokens of the DB handles open in this process

func registerLive(token string)   { live.Store(token, struct{}{}) }
func unregisterLive(token string) { live.Delete(token) }

// newWriterToken makes the token of a new DB handle.
func newWriterToken() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%d/%s/%s", os.Getpid(), processStart(os.Getpid()), hex.EncodeToString(b))
}

// writerAlive reports whether the writer identified by pid and token is
// still running.
func writerAlive(pid int, token string) bool {
	if pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		_, ok := live.Load(token)
		return ok
	}
	parts := strings.SplitN(token, "/", 3)
	if len(parts) == 3 && parts[1] != "" {
		if start := processStart(pid); start != "" || procAvailable() {
			return start == parts[1]
		}
	}
	return pidExists(pid)
}

// processStart identifies a process instance: on Linux the boot id and the
// start time in clock ticks from /proc; "" where that is not available.
func processStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name (field 2) may hold spaces and parentheses: count
	// fields from the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	const startTime = 22 - 3 // field 22, counted from field 3
	if len(f) <= startTime {
		return ""
	}
	return bootID() + "-" + f[startTime]
}

var bootOnce = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "boot"
	}
	return strings.TrimSpace(string(b))
})

func bootID() string { return bootOnce() }

// procAvailable reports whether /proc describes processes here, so that a
// missing /proc/<pid> means the process is gone.
func procAvailable() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}
