//go:build linux

package shard

import "golang.org/x/sys/unix"

// mapBig maps n bytes of zeroed anonymous memory outside the Go heap and
// returns nil when the mapping fails (the caller falls back to the Go heap).
// A table bigger than one huge page (an index) asks for transparent huge
// pages (THP in "madvise" mode, the common default, gives them only to
// regions that ask); a single page (slab pages, entry chunks) keeps 4 KiB
// pages (see setSmallPages).
func mapBig(n int) []byte {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil
	}
	if n > bigPageSize {
		_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
	} else {
		setSmallPages(b)
	}
	return b
}

// setSmallPages keeps a mapping on 4 KiB pages even where THP is "always".
func setSmallPages(b []byte) { _ = unix.Madvise(b, unix.MADV_NOHUGEPAGE) }

// dropBig gives the pages of a mapping back to the kernel but keeps the
// mapping: reading it afterwards yields zeros, never a fault.
func dropBig(b []byte) { _ = unix.Madvise(b, unix.MADV_DONTNEED) }
