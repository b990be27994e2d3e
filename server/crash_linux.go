package server

import (
	"os"
	"os/signal"
	"syscall"
	"time"
	"unsafe"
)

// dieBySignal ends the process by sig with the signal's default action (a
// core dump where enabled), as Redis's bugReportEnd does: Go's own handler
// is replaced by SIG_DFL first (rt_sigaction), or the runtime would turn
// the signal into its own exit.
func dieBySignal(sig syscall.Signal) {
	signal.Reset(sig)
	var act struct { // the kernel's struct sigaction; SIG_DFL is 0
		handler  uintptr
		flags    uint64
		restorer uintptr
		mask     uint64
	}
	_, _, _ = syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	var set uint64 = 1 << (uint(sig) - 1)
	_, _, _ = syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, 1 /* SIG_UNBLOCK */, uintptr(unsafe.Pointer(&set)), 0, 8, 0, 0)
	_ = syscall.Kill(os.Getpid(), sig)
	time.Sleep(time.Second)
	os.Exit(128 + int(sig)) // the signal did not end us
}
