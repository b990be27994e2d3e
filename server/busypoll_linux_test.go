package server

import (
	"testing"

	"golang.org/x/sys/unix"
)

// epollWatching finds the epoll instance that watches a socket with the
// socket's number as its data (gnet's registration), not one that watches
// it with other data (Go's poller), and epollReady tells a ready instance
// from an idle one without taking its event.
func TestEpollWatchingAndReady(t *testing.T) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pair[0])
	defer unix.Close(pair[1])
	other, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(other)
	// Registered first, with other data: must not be taken for gnet's.
	if err := unix.EpollCtl(other, unix.EPOLL_CTL_ADD, pair[0], &unix.EpollEvent{Events: unix.EPOLLIN, Fd: 7, Pad: 1}); err != nil {
		t.Fatal(err)
	}
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(ep)
	if got := epollWatching(pair[0]); got != -1 {
		t.Fatalf("before registration: epollWatching = %d, want -1", got)
	}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, pair[0], &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(pair[0])}); err != nil {
		t.Fatal(err)
	}
	if got := epollWatching(pair[0]); got != ep {
		t.Fatalf("epollWatching = %d, want %d (the other instance is %d)", got, ep, other)
	}
	if got := epollWatching(pair[1]); got != -1 {
		t.Fatalf("unwatched socket: epollWatching = %d, want -1", got)
	}

	if epollReady(ep) {
		t.Fatal("ready with nothing to read")
	}
	if _, err := unix.Write(pair[1], []byte("x")); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // looking does not take the event
		if !epollReady(ep) {
			t.Fatalf("look %d: not ready with a byte to read", i)
		}
	}
	ev := make([]unix.EpollEvent, 4)
	if n, err := unix.EpollWait(ep, ev, 0); err != nil || n != 1 || ev[0].Fd != int32(pair[0]) {
		t.Fatalf("epoll_wait after the looks: %d events, %v", n, err)
	}
	var b [1]byte
	if _, err := unix.Read(pair[0], b[:]); err != nil {
		t.Fatal(err)
	}
	if epollReady(ep) {
		t.Fatal("ready after the byte was read")
	}
}
