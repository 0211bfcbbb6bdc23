//go:build linux

package shm

// popFront removes the first element of queue q, which is m[k], and the
// queue when it empties; the caller passes q so that the map is looked up
// once per message (its hashing was several per cent of a small
// collective's CPU time: bench/results/small_ops.md).
func popFront[T any](m map[matchKey][]T, k matchKey, q []T, f *queueFree[T]) {
	var zero T
	q[0] = zero
	if len(q) == 1 {
		delete(m, k)
		f.put(q)
	} else {
		m[k] = q[1:]
	}
}

// pushBack appends x to queue m[k], starting the queue on a backing array
// from f if it has none.
func pushBack[T any](m map[matchKey][]T, k matchKey, x T, f *queueFree[T]) {
	q := m[k]
	if q == nil {
		q = f.get()
	}
	m[k] = append(q, x)
}

// queueFree keeps the backing arrays of emptied queues (of e.recvs and
// e.unexpected) for the next queue, so that a steady stream of messages
// allocates none for them; it keeps at most queueFreeMax. Under e.mu.
type queueFree[T any] struct{ free [][]T }

const queueFreeMax = 256

func (f *queueFree[T]) get() []T {
	n := len(f.free)
	if n == 0 {
		return make([]T, 0, 2)
	}
	q := f.free[n-1]
	f.free[n-1] = nil
	f.free = f.free[:n-1]
	return q
}

func (f *queueFree[T]) put(q []T) {
	if cap(q) > 0 && len(f.free) < queueFreeMax {
		clear(q[:cap(q)])
		f.free = append(f.free, q[:0])
	}
}
