//go:build !linux

package server

// backgroundThread is nice_linux.go's; elsewhere the goroutine runs as any.
func backgroundThread() {}
