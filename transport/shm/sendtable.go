//go:build linux

package shm

// sendTable is an endpoint's rendezvous sends in flight (posted, not yet
// completed) and the unused words of its segment's send table. The sends
// are kept in a slice in no order, each request knowing its place
// (request.live), so that posting, completing and looking over them
// (reapCopied, every poll that finds a copied count grown) cost no map
// hashing or map iteration: an AllToAll's sends took 3 map inserts, 3
// deletes and a map range a poll before. Under the endpoint's lock.
type sendTable struct {
	live []*request // sends in flight; live[r.live] == r
	free []int      // unused words, the next one last
}

// newSendTable returns a table of words unused words, handed out from
// word 0 up.
func newSendTable(words int) sendTable {
	t := sendTable{free: make([]int, words)}
	for i := range t.free {
		t.free[i] = words - 1 - i
	}
	return t
}

// full reports whether every word is in use.
func (t *sendTable) full() bool { return len(t.free) == 0 }

// take gives r an unused word (r.index), which there must be (full is
// false), and adds it to the sends in flight.
func (t *sendTable) take(r *request) {
	n := len(t.free)
	r.index = t.free[n-1]
	t.free = t.free[:n-1]
	r.live = len(t.live)
	t.live = append(t.live, r)
}

// has reports whether r is a send in flight of this table.
func (t *sendTable) has(r *request) bool {
	return r.live >= 0 && r.live < len(t.live) && t.live[r.live] == r
}

// drop removes r, a send in flight (has), and frees its word: the last
// send in flight takes r's place.
func (t *sendTable) drop(r *request) {
	last := len(t.live) - 1
	if m := t.live[last]; m != r {
		t.live[r.live], m.live = m, r.live
	}
	t.live[last] = nil
	t.live = t.live[:last]
	r.live = -1
	t.free = append(t.free, r.index)
}

// each calls f for every send in flight, from the last to the first, so
// that f may drop the send it is given (drop moves only a send f has
// already seen into its place) but no other.
func (t *sendTable) each(f func(r *request)) {
	for i := len(t.live) - 1; i >= 0; i-- {
		if i < len(t.live) {
			f(t.live[i])
		}
	}
}

// all returns a copy of the sends in flight.
func (t *sendTable) all() []*request {
	return append([]*request(nil), t.live...)
}
