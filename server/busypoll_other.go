//go:build !linux

package server

// Busy polling needs the loop's epoll instance (busypoll_linux.go).
func epollWatching(fd int) int { return -1 }

func epollReady(epfd int) bool { return false }
