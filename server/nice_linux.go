package server

import (
	"runtime"
	"syscall"
)

// backgroundThread gives the calling goroutine a thread of its own at a
// lower scheduling priority (nice snapNice), for the CPU work of an image
// that must not take a core from a loop: a BGSAVE's compressor. The
// goroutine must not unlock it: the thread then ends with the goroutine,
// and its priority with it.
func backgroundThread() {
	runtime.LockOSThread()
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), snapNice)
}
