//go:build unix

package store

import (
	"errors"
	"syscall"
)

// pidExists reports whether a process with this pid exists (it may belong
// to another user).
func pidExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
