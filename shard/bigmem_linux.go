//go:build linux

package shard

import "golang.org/x/sys/unix"

// mapBig maps n bytes of zeroed anonymous memory outside the Go heap and
// asks for transparent huge pages (THP in "madvise" mode, the common
// default, gives them only to regions that ask). It returns nil when the
// mapping fails; the caller falls back to the Go heap.
func mapBig(n int) []byte {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil
	}
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
	return b
}

// dropBig gives the pages of a mapping back to the kernel but keeps the
// mapping: reading it afterwards yields zeros, never a fault.
func dropBig(b []byte) { _ = unix.Madvise(b, unix.MADV_DONTNEED) }
