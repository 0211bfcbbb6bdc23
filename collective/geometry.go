package collective

// geometry cuts a buffer of count elements into n segments (sizes differ by
// at most one element; the first count%n segments get the extra one) and
// each segment into k chunks of at most chunk bytes. Every rank computes the
// same geometry from the same arguments, so the sizes of the messages they
// exchange agree without being sent.
type geometry struct {
	esize int
	off   []int // byte offset of segment i; off[n] is the total
	chunk int   // bytes per chunk, a multiple of esize
	k     int   // chunks per segment, at least 1 (so every step sends a message)
}

func newGeometry(count, n, esize, chunkBytes int) geometry {
	return geometryIn(nil, count, n, esize, chunkBytes)
}

// geometryIn is newGeometry with its offsets in off's backing array when
// it has room for n+1 (no allocation).
func geometryIn(off []int, count, n, esize, chunkBytes int) geometry {
	if cap(off) >= n+1 {
		off = off[:n+1]
		clear(off)
	} else {
		off = make([]int, n+1)
	}
	base, extra := count/n, count%n
	for i := 0; i < n; i++ {
		sz := base
		if i < extra {
			sz++
		}
		off[i+1] = off[i] + sz*esize
	}
	return offsetGeometry(off, esize, chunkBytes)
}

// offsetGeometry is the geometry of the segments at off (segment i is
// [off[i], off[i+1])), in chunks of chunkBytes rounded down to whole
// elements (at least one): k is the most chunks any segment takes.
func offsetGeometry(off []int, esize, chunkBytes int) geometry {
	g := geometry{esize: esize, off: off, chunk: max(esize, chunkBytes/esize*esize)}
	for i := range len(off) - 1 {
		g.k = max(g.k, (off[i+1]-off[i]+g.chunk-1)/g.chunk)
	}
	g.k = max(g.k, 1)
	return g
}

// uniformGeometry is a geometry of n segments of exactly count elements each
// (the blocks of AllGather, ReduceScatter and AllToAll).
func uniformGeometry(count, n, esize, chunkBytes int) geometry {
	return newGeometry(count*n, n, esize, chunkBytes)
}

// seg returns the byte range [lo, hi) of segment i.
func (g geometry) seg(i int) (lo, hi int) { return g.off[i], g.off[i+1] }

// span returns the byte range of chunk c of segment i; it may be empty.
func (g geometry) span(i, c int) (lo, hi int) {
	lo = min(g.off[i]+c*g.chunk, g.off[i+1])
	hi = min(lo+g.chunk, g.off[i+1])
	return lo, hi
}

// mod returns i mod n in [0, n).
func mod(i, n int) int { return ((i % n) + n) % n }
