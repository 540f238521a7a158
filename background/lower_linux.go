package background

import (
	"syscall"
	"unsafe"
)

const lowers = true

// schedIdle is Linux's SCHED_IDLE policy: the thread runs when no
// ordinary thread of the machine wants its CPU, and an ordinary thread
// that wakes takes the CPU from it at once.
const schedIdle = 5

// lower puts the calling thread under SCHED_IDLE, or at nice 19 if that
// is refused. Either lasts for the thread's life: an unprivileged thread
// cannot be raised back.
func lower() {
	tid := syscall.Gettid()
	var param struct{ priority int32 }
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, uintptr(tid), schedIdle, uintptr(unsafe.Pointer(&param)))
	if errno != 0 {
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, tid, 19)
	}
}
