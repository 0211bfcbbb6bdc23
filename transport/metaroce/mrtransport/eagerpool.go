package mrtransport

import "math/bits"

// eagerPool keeps the copies that completed eager sends leave behind, for
// the next eager sends to copy into: a collective sends messages of the
// same few sizes over and over, and a fresh copy each time costs an
// allocation, the garbage collector's work and, on a host where first
// touch is slow, page faults. Buffers are kept by size class (powers of
// two), at most limit bytes of them in all. The caller holds eng.mu.
type eagerPool struct {
	free  [bits.UintSize][][]byte // by class: buffers of capacity 1<<class
	bytes int                     // capacity of the buffers kept
	limit int
}

// get returns a buffer of n bytes (n > 0), reused if one of its class is
// kept.
func (p *eagerPool) get(n int) []byte {
	c := sizeClass(n)
	if k := len(p.free[c]); k > 0 {
		b := p.free[c][k-1]
		p.free[c][k-1] = nil
		p.free[c] = p.free[c][:k-1]
		p.bytes -= cap(b)
		return b[:n]
	}
	return make([]byte, n, 1<<c)
}

// put keeps b for reuse if it came from get and the pool has room.
func (p *eagerPool) put(b []byte) {
	if cap(b) == 0 || cap(b)&(cap(b)-1) != 0 || p.bytes+cap(b) > p.limit {
		return
	}
	c := sizeClass(cap(b))
	p.free[c] = append(p.free[c], b[:0])
	p.bytes += cap(b)
}

// sizeClass is the smallest c with 1<<c >= n.
func sizeClass(n int) int { return bits.Len(uint(n - 1)) }
