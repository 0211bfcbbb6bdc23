package simfabric

import "time"

// timed is an event with a time and a sequence number. Events are ordered by
// time, then by sequence number, which is unique and increases in the order
// events were scheduled; so ties at one instant resolve in scheduling order.
type timed interface {
	key() (time.Duration, uint64)
}

// minHeap is a binary min-heap of events. Its size is bounded by its
// owner's limits (MaxPacketsInFlight, MaxFaults).
type minHeap[E timed] struct {
	items []E
}

func before[E timed](a, b E) bool {
	at, as := a.key()
	bt, bs := b.key()
	return at < bt || (at == bt && as < bs)
}

func (h *minHeap[E]) len() int { return len(h.items) }

// peek returns the earliest event; the heap must not be empty.
func (h *minHeap[E]) peek() E { return h.items[0] }

func (h *minHeap[E]) push(e E) {
	h.items = append(h.items, e)
	i := len(h.items) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !before(h.items[i], h.items[parent]) {
			break
		}
		h.items[i], h.items[parent] = h.items[parent], h.items[i]
		i = parent
	}
}

// pop removes and returns the earliest event; the heap must not be empty.
func (h *minHeap[E]) pop() E {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	var zero E
	h.items[last] = zero // let the GC reclaim what the slot pointed to
	h.items = h.items[:last]
	i := 0
	for {
		smallest, l, r := i, 2*i+1, 2*i+2
		if l < last && before(h.items[l], h.items[smallest]) {
			smallest = l
		}
		if r < last && before(h.items[r], h.items[smallest]) {
			smallest = r
		}
		if smallest == i {
			return top
		}
		h.items[i], h.items[smallest] = h.items[smallest], h.items[i]
		i = smallest
	}
}
