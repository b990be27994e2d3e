//go:build linux

package shard

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// vmaOf returns the /proc/self/smaps fields of the mapping holding b[0]
// ("VmFlags", "AnonHugePages", ...).
func vmaOf(t *testing.T, b []byte) map[string]string {
	t.Helper()
	addr := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	var fields map[string]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		first, rest, _ := strings.Cut(line, " ")
		if name, ok := strings.CutSuffix(first, ":"); ok {
			if fields != nil {
				fields[name] = strings.TrimSpace(rest)
			}
			continue
		}
		if fields != nil {
			return fields // the next mapping's header
		}
		lo, hi, _ := strings.Cut(first, "-")
		l, err1 := strconv.ParseUint(lo, 16, 64)
		h, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 == nil && err2 == nil && l <= addr && addr < h {
			fields = map[string]string{}
		}
	}
	if fields == nil {
		t.Fatalf("no mapping holds %#x", addr)
	}
	return fields
}

func hasFlag(flags, f string) bool {
	for _, x := range strings.Fields(flags) {
		if x == f {
			return true
		}
	}
	return false
}

// Single 2 MiB pages (slab pages, entry chunks) come faulted in by the
// prefaulter and on 4 KiB pages, never a fresh huge page whose first touch
// stalls a loop; tables bigger than that (an index) ask for huge pages.
func TestBigMemPagePolicy(t *testing.T) {
	freeBig(allocBig(bigPageSize)) // starts the prefaulter
	deadline := time.Now().Add(5 * time.Second)
	for len(bigReady) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the prefaulter queued no page")
		}
		time.Sleep(time.Millisecond)
	}
	p := allocBig(bigPageSize)
	defer freeBig(p)
	if !isMapped(p) {
		t.Skip("mmap failed: pages come from the Go heap")
	}
	vec := make([]byte, len(p)/4096)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatalf("mincore: %v", e)
	}
	for i, v := range vec {
		if v&1 == 0 {
			t.Fatalf("4 KiB page %d of a prefaulted page is not resident", i)
		}
	}
	vma := vmaOf(t, p)
	if !hasFlag(vma["VmFlags"], "nh") {
		t.Errorf("single page: VmFlags %q lack nh (MADV_NOHUGEPAGE)", vma["VmFlags"])
	}
	if v := vma["AnonHugePages"]; v != "0 kB" {
		t.Errorf("single page: AnonHugePages %s, want 0 kB", v)
	}

	ix := allocBig(2 * bigPageSize)
	defer freeBig(ix)
	if vma := vmaOf(t, ix); !hasFlag(vma["VmFlags"], "hg") {
		t.Errorf("index table: VmFlags %q lack hg (MADV_HUGEPAGE)", vma["VmFlags"])
	}
}
