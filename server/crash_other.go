//go:build !linux

package server

import (
	"os"
	"syscall"
)

// dieBySignal exits with the status a shell shows for a death by sig.
func dieBySignal(sig syscall.Signal) { os.Exit(128 + int(sig)) }
