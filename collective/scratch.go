package collective

import "sync"

// scratchPool keeps chunk-sized buffers for reuse across operations, so
// that a steady stream of collectives allocates (and page-faults) nothing.
// It holds at most scratchKeepMax buffers; more may be lent at once.
type scratchPool struct {
	size int // bytes per buffer

	mu        sync.Mutex
	free      [][]byte
	large     []byte // kept for getLarge; nil while lent out
	largeLent bool
}

// scratchKeepMax bounds the buffers a communicator keeps between operations.
const scratchKeepMax = 4 * PipelineDepthMax

// get lends n buffers of the pool's size.
func (p *scratchPool) get(n int) [][]byte {
	out := make([][]byte, 0, n)
	p.mu.Lock()
	for len(out) < n && len(p.free) > 0 {
		last := len(p.free) - 1
		out = append(out, p.free[last])
		p.free[last] = nil
		p.free = p.free[:last]
	}
	p.mu.Unlock()
	for len(out) < n {
		out = append(out, make([]byte, p.size))
	}
	return out
}

// put returns buffers lent by get.
func (p *scratchPool) put(bufs [][]byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range bufs {
		if len(p.free) < scratchKeepMax {
			p.free = append(p.free, b[:p.size])
		}
	}
}

// getLarge lends a buffer of n bytes (n above the chunk size): the pool's
// large buffer, grown if needed, or a fresh one while it is lent out. The
// pool keeps one large buffer, the largest asked for, between operations.
func (p *scratchPool) getLarge(n int) ([]byte, func()) {
	p.mu.Lock()
	if p.largeLent {
		p.mu.Unlock()
		return make([]byte, n), func() {}
	}
	p.largeLent = true
	b := p.large
	p.mu.Unlock()
	if cap(b) < n {
		b = make([]byte, n)
	}
	return b[:n], func() {
		p.mu.Lock()
		p.large, p.largeLent = b[:cap(b)], false
		p.mu.Unlock()
	}
}
