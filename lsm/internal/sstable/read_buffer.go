package sstable

import "sync"

// maxPooledReadBuffer bounds the buffers kept for reuse: a rare huge block
// (a full filter of a big table) is not worth holding on to.
const maxPooledReadBuffer = 1 << 20

// readBuffers recycles the buffers compressed blocks are read into. The
// stored bytes of a compressed block are garbage as soon as it is
// decompressed; allocating them afresh for every cache miss made the Go
// runtime zero ~40 KB per miss (runtime.memclrNoHeapPointers was 15% of the
// get phase's CPU at a 64 MiB cache on the 50M-key bench) and collect it.
var readBuffers = sync.Pool{New: func() any { return new([]byte) }}

// getReadBuffer returns a pooled buffer of length n (contents undefined).
func getReadBuffer(n int) *[]byte {
	b := readBuffers.Get().(*[]byte)
	if cap(*b) < n {
		*b = make([]byte, n)
	}
	*b = (*b)[:n]
	return b
}

// putReadBuffer returns b to the pool; nothing may use it afterwards.
func putReadBuffer(b *[]byte) {
	if cap(*b) <= maxPooledReadBuffer {
		readBuffers.Put(b)
	}
}
