package server

import (
	"fmt"
	"io"
	"syscall"
	"testing"
)

// CONFIG SET maxclients beyond what RLIMIT_NOFILE can be raised to fails
// with Redis's error naming the number that would fit, and keeps the old
// value; a number that fits is accepted.
func TestMaxclientsFollowsOpenFilesLimit(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skip(err)
	}
	cfg := DefaultConfig()
	srv := &Server{cfg: cfg, log: NewLoggerTo(io.Discard, cfg)}
	if err := srv.initMaxclients(); err != nil {
		t.Fatal(err)
	}
	fits := int64(lim.Max) - reservedFDs
	if err := cfg.Set([][2]string{{"maxclients", fmt.Sprint(fits)}}); err != nil {
		t.Errorf("maxclients %d (hard limit %d): %v", fits, lim.Max, err)
	}
	// Past the hard limit the raise fails unless the process may raise
	// hard limits (CAP_SYS_RESOURCE); then there is nothing to test.
	over := fits + 1000
	err := cfg.Set([][2]string{{"maxclients", fmt.Sprint(over)}})
	var now syscall.Rlimit
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &now)
	if err == nil && now.Cur >= uint64(over)+reservedFDs {
		t.Skip("the process may raise its hard limit")
	}
	want := fmt.Sprintf("ERR CONFIG SET failed (possibly related to argument 'maxclients') - "+
		"The operating system is not able to handle the specified number of clients, try with %d", fits)
	if err == nil || err.Error() != want {
		t.Errorf("maxclients %d: got %v, want %q", over, err, want)
	}
	if got := cfg.MaxClients(); got != fits {
		t.Errorf("maxclients is %d after the failed CONFIG SET, want %d", got, fits)
	}
	// Leave the soft limit where it was.
	_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
}
