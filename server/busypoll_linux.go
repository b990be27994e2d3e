package server

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// epollWatching returns the epoll instance that watches fd with fd as its
// data, as gnet registers its connections, or -1. It reads the process's
// eventpoll files' fdinfo, whose lines are
// "tfd: <fd> events: <hex> data: <hex> pos:... ino:... sdev:...".
func epollWatching(fd int) int {
	if fd < 0 {
		return -1
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	want := strconv.Itoa(fd)
	for _, e := range ents {
		link, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil || link != "anon_inode:[eventpoll]" {
			continue
		}
		info, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(info), "\n") {
			f := strings.Fields(line)
			if len(f) < 6 || f[0] != "tfd:" || f[1] != want || f[4] != "data:" {
				continue
			}
			if data, err := strconv.ParseUint(f[5], 16, 64); err == nil && data == uint64(fd) {
				if ep, err := strconv.Atoi(e.Name()); err == nil {
					return ep
				}
			}
		}
	}
	return -1
}

// epollReady tells whether epoll_wait on epfd would return an event now,
// without taking it: an epoll instance is readable when one of the files
// it watches is ready.
func epollReady(epfd int) bool {
	fds := [1]unix.PollFd{{Fd: int32(epfd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds[:], 0)
	return err == nil && n > 0
}
