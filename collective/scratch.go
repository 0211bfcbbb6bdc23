package collective

import "sync"

// scratchPool keeps chunk-sized buffers for reuse across operations, so
// that a steady stream of collectives allocates (and page-faults) nothing.
// It holds at most scratchKeepMax buffers; more may be lent at once.
type scratchPool struct {
	size int // bytes per buffer

	mu        sync.Mutex
	free      [][]byte
	large     []byte // kept for lend; nil while lent out
	largeLent bool
}

// scratchKeepMax bounds the buffers a communicator keeps between operations.
const scratchKeepMax = 4 * PipelineDepthMax

// get lends n buffers of the pool's size.
func (p *scratchPool) get(n int) [][]byte {
	out := make([][]byte, 0, n)
	p.mu.Lock()
	for len(out) < n && len(p.free) > 0 {
		out = append(out, p.takeLocked())
	}
	p.mu.Unlock()
	for len(out) < n {
		out = append(out, make([]byte, p.size))
	}
	return out
}

// getOne lends one buffer of the pool's size.
func (p *scratchPool) getOne() []byte {
	p.mu.Lock()
	if len(p.free) > 0 {
		b := p.takeLocked()
		p.mu.Unlock()
		return b
	}
	p.mu.Unlock()
	return make([]byte, p.size)
}

func (p *scratchPool) takeLocked() []byte {
	last := len(p.free) - 1
	b := p.free[last]
	p.free[last] = nil
	p.free = p.free[:last]
	return b
}

// put returns buffers lent by get.
func (p *scratchPool) put(bufs [][]byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range bufs {
		p.keepLocked(b)
	}
}

func (p *scratchPool) keepLocked(b []byte) {
	if len(p.free) < scratchKeepMax {
		p.free = append(p.free, b[:p.size])
	}
}

// lease is a buffer lent by Comm.tempBuffer; release gives it back.
type lease struct {
	buf   []byte       // the n bytes asked for, the start of the lent buffer
	pool  *scratchPool // nil: a fresh buffer that nobody keeps
	large bool         // the lent buffer is the pool's large buffer
}

// release gives the leased buffer back to its pool.
func (l lease) release() {
	if l.pool == nil {
		return
	}
	whole := l.buf[:cap(l.buf)]
	l.pool.mu.Lock()
	defer l.pool.mu.Unlock()
	if l.large {
		l.pool.large, l.pool.largeLent = whole, false
		return
	}
	l.pool.keepLocked(whole)
}

// lend lends a buffer of n bytes: one of the pool's chunks when it fits,
// else the pool's large buffer, grown if needed, or a fresh one while that
// is lent out. The pool keeps one large buffer, the largest asked for,
// between operations.
func (p *scratchPool) lend(n int) lease {
	if n <= p.size {
		b := p.getOne()
		return lease{buf: b[:n], pool: p}
	}
	p.mu.Lock()
	if p.largeLent {
		p.mu.Unlock()
		return lease{buf: make([]byte, n)}
	}
	p.largeLent = true
	b := p.large
	p.mu.Unlock()
	if cap(b) < n {
		b = make([]byte, n)
	}
	return lease{buf: b[:n], pool: p, large: true}
}
