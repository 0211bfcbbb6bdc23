package tcp

import "github.com/gocoll/gocoll/transport"

// Reuse on the steady-state path of small messages (issue 17: no
// allocation per small collective call). A collective uses a new tag per
// operation, so a per-tag list made for each message, the record of each
// message that arrives before its receive and the buffer of its body would
// each cost an allocation per message; instead each peer keeps, under
// Endpoint.mu, the lists emptied, the records and the small bodies taken,
// up to reuseMax of each, for the next ones.
const (
	// reuseMax bounds each of a peer's free lists.
	reuseMax = 64
	// reuseBodyMax is the largest eager body whose buffer is kept.
	reuseBodyMax = 4 << 10
)

// freeLists are a peer's kept lists, records and bodies.
type freeLists struct {
	posted [][]*request
	unexp  [][]*unexpected
	recs   []*unexpected
	bodies [][]byte
}

// push appends v to the list of key in m, with a kept slice if the key has
// none.
func push[V any](m map[transport.Tag][]V, free *[][]V, key transport.Tag, v V) {
	list, ok := m[key]
	if n := len(*free); !ok && n > 0 {
		list = (*free)[n-1]
		(*free)[n-1] = nil
		*free = (*free)[:n-1]
	}
	m[key] = append(list, v)
}

// popFront removes list's first element, keeping the slice's start (and so
// its capacity, for reuse once empty).
func popFront[V any](list []V) []V {
	copy(list, list[1:])
	var zero V
	list[len(list)-1] = zero
	return list[:len(list)-1]
}

// store stores list under key, deleting the key when list is empty (so
// that maps keep no entries for finished tags) and keeping the emptied
// slice in free.
func store[V any](m map[transport.Tag][]V, free *[][]V, key transport.Tag, list []V) {
	if len(list) > 0 {
		m[key] = list
		return
	}
	delete(m, key)
	if cap(list) > 0 && cap(list) <= reuseMax && len(*free) < reuseMax {
		*free = append(*free, list[:0])
	}
}

// newRecord returns a cleared record of a message that arrived before its
// receive.
func (f *freeLists) newRecord() *unexpected {
	n := len(f.recs)
	if n == 0 {
		return &unexpected{}
	}
	u := f.recs[n-1]
	f.recs[n-1] = nil
	f.recs = f.recs[:n-1]
	return u
}

// putRecord keeps u, which nothing refers to any more, with its body.
func (f *freeLists) putRecord(u *unexpected) {
	f.putBody(u.data)
	if len(f.recs) < reuseMax {
		*u = unexpected{}
		f.recs = append(f.recs, u)
	}
}

// body returns a buffer of n bytes for an eager body.
func (f *freeLists) body(n int) []byte {
	if n <= reuseBodyMax {
		for i := len(f.bodies) - 1; i >= 0; i-- {
			if b := f.bodies[i]; cap(b) >= n {
				f.bodies[i] = f.bodies[len(f.bodies)-1]
				f.bodies[len(f.bodies)-1] = nil
				f.bodies = f.bodies[:len(f.bodies)-1]
				return b[:n]
			}
		}
	}
	// Exactly n: the receiver's credit and UnexpectedBytes count len, so a
	// body of more capacity would hold memory they do not see.
	return make([]byte, n)
}

// putBody keeps b, which nothing refers to any more, if it is small.
func (f *freeLists) putBody(b []byte) {
	if c := cap(b); c > 0 && c <= reuseBodyMax && len(f.bodies) < reuseMax {
		f.bodies = append(f.bodies, b[:0])
	}
}
