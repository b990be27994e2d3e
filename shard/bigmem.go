package shard

import (
	"sync"
	"unsafe"
)

// Big, pointer-free arrays of the keyspace — slab pages, index tables and
// entry chunks — live outside the Go heap, in anonymous mappings that ask
// the kernel for 2 MiB pages.
//
// Why: a key lookup walks three arrays at random (index word, entry, key
// bytes). With 4 KiB pages over a few hundred MiB, nearly every one of
// those loads also misses the TLB, and on a virtual machine a TLB miss is a
// two-level page walk. Huge pages cut the walks, and memory the GC never
// sees costs it nothing to account for either.
//
// Mappings are never unmapped: a released one has its pages dropped
// (MADV_DONTNEED, so RSS falls at once) and waits in a pool for the next
// request of the same size. A stale slice into released memory therefore
// reads zeros or newer data, as a reused slab slot would, and never faults.

// bigPageSize is the size of a huge page and of a full slab page.
const bigPageSize = 2 << 20

var bigPool struct {
	sync.Mutex
	free map[int][][]byte
}

// allocBig returns n zeroed bytes: a pooled or new mapping when n is a
// multiple of bigPageSize, else (or when mapping fails) Go heap memory.
func allocBig(n int) []byte {
	if n%bigPageSize == 0 {
		bigPool.Lock()
		if l := bigPool.free[n]; len(l) > 0 {
			b := l[len(l)-1]
			bigPool.free[n] = l[:len(l)-1]
			bigPool.Unlock()
			return b // zero: dropped pages read back as zeros
		}
		bigPool.Unlock()
		if b := mapBig(n); b != nil {
			mapped.Store(uintptr(unsafe.Pointer(unsafe.SliceData(b))), struct{}{})
			return b
		}
	}
	return make([]byte, n)
}

// freeBig releases memory from allocBig. Go heap memory is left to the GC.
func freeBig(b []byte) {
	n := cap(b)
	if n == 0 || n%bigPageSize != 0 || !isMapped(b) {
		return
	}
	b = b[:n]
	dropBig(b)
	bigPool.Lock()
	if bigPool.free == nil {
		bigPool.free = map[int][][]byte{}
	}
	bigPool.free[n] = append(bigPool.free[n], b)
	bigPool.Unlock()
}

// mapped records the start addresses of live mappings, so that freeBig can
// tell them from heap fallbacks.
var mapped sync.Map

func isMapped(b []byte) bool {
	_, ok := mapped.Load(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	return ok
}

// wordsOf views memory from allocBig as 64-bit words.
func wordsOf(b []byte) []uint64 {
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/8)
}

// bytesOfWords is the inverse of wordsOf, for freeBig.
func bytesOfWords(w []uint64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), cap(w)*8)
}

// entriesOf views memory from allocBig as keyspace entries (which hold no
// Go pointers, so they may live outside the heap).
func entriesOf(b []byte) []entry {
	return unsafe.Slice((*entry)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(entry{})))
}
