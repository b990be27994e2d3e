package shard

import (
	"runtime"
	"sync"
	"unsafe"
)

// Big, pointer-free arrays of the keyspace — slab pages, index tables and
// entry chunks — live outside the Go heap, in anonymous mappings that the GC
// never sees and so never accounts for.
//
// Index tables bigger than 2 MiB ask the kernel for huge pages: a lookup
// probes the index at random, and with 4 KiB pages over a few hundred MiB
// nearly every probe also misses the TLB (on a virtual machine a TLB miss is
// a two-level page walk). Slab pages (past a class's first, smaller ones,
// slab.go) and entry chunks, which grow one 2 MiB page at a time as keys
// are added, keep 4 KiB pages: the first touch of a fresh huge page zeroes
// 2 MiB in one fault, and on the VM this was measured
// on that fault took 5.6-6.4 ms (against 0.7-1.0 ms for the same 2 MiB in
// 4 KiB pages). A loop that waits for it stalls every client for as long,
// which put SET's p99.9 with 5M keys at 6.7-6.9 ms against redis-server's
// 0.9-2.7 ms; with 4 KiB pages it was 1.3-1.8 ms, for about 5% more CPU per
// GET at -P 16. (Redis turns THP off for itself for the same reason.)
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

// bigReady holds pages already faulted in by a background goroutine
// (prefault), so that the loops take no page faults when the keyspace grows.
var bigReady = make(chan []byte, 2)

var prefaultOnce sync.Once

// prefaultStep is how much prefault faults in before it lets a loop that
// shares its P run: 16 faults of 4 KiB, tens of microseconds. (With one
// shard GOMAXPROCS is 1, and a fault cannot be preempted.)
const prefaultStep = 64 << 10

// prefault keeps bigReady full: pooled pages first, else new mappings, each
// touched once per 4 KiB page (a write of the zero they already hold).
func prefault() {
	for {
		b := takeBig(bigPageSize)
		if b == nil {
			return // mapping failed: the loops fall back on their own
		}
		for i := 0; i < len(b); i += 4096 {
			if i%prefaultStep == 0 && i > 0 {
				runtime.Gosched()
			}
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
// bigPageSize (a single page comes prefaulted), else (or when mapping
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
