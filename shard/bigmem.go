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

// bigReady holds huge pages already faulted in by a background goroutine
// (prefault), so that the loops never take a page fault on a fresh huge
// page: with THP's "madvise" defrag setting that fault may compact memory
// synchronously, and SETs that hit it took 6-13 ms where they took well
// under 2 ms on Go heap pages (slowlog, 5M keys, SET -P 1).
var bigReady = make(chan []byte, 2)

var prefaultOnce sync.Once

// prefault keeps bigReady full: pooled pages first, else new mappings, each
// touched once per 4 KiB page (a write of the zero they already hold).
func prefault() {
	for {
		b := takeBig(bigPageSize)
		if b == nil {
			return // mapping failed: the loops fall back on their own
		}
		for i := 0; i < len(b); i += 4096 {
			b[i] = 0
		}
		bigReady <- b
	}
}

// takeBig returns a pooled or new mapping of n bytes, or nil.
func takeBig(n int) []byte {
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
	return nil
}

// allocBig returns n zeroed bytes: a mapping when n is a multiple of
// bigPageSize (one huge page comes prefaulted), else (or when mapping
// fails) Go heap memory.
func allocBig(n int) []byte {
	if n == bigPageSize {
		prefaultOnce.Do(func() { go prefault() })
		select {
		case b := <-bigReady:
			return b
		default:
		}
	}
	if n%bigPageSize == 0 {
		if b := takeBig(n); b != nil {
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
