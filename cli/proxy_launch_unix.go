//go:build linux || darwin

package cli

import (
	"os"
	"syscall"
	"unsafe"
)

// terminalSentToGroup reports whether f is a terminal whose foreground
// process group is modelwire's own: then a Ctrl-C or Ctrl-\ typed there
// went to the whole group, the command (which shares it) included, and
// forwarding it again would deliver it twice.
func terminalSentToGroup(f *os.File) bool {
	if f == nil || !isTerminal(f) {
		return false
	}
	var pgrp int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(syscall.TIOCGPGRP), uintptr(unsafe.Pointer(&pgrp))); errno != 0 {
		return false
	}
	return int(pgrp) == syscall.Getpgrp()
}
