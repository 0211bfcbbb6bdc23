package collective

// hierArena lends the hierarchical pipeline's receives that land in a
// buffer of their own (hstage.slotReceive) the bytes they need, from a
// fixed set of chunk buffers used as one ring: blocks are cut in the
// order of the receives' wait positions (the order post lends them) and
// the ring's tail passes a block once it and every block before it are
// freed. A receive never spans two chunk buffers (none is larger than a
// chunk); one that does not fit in the rest of the current buffer starts
// at the next one. So the receives posted ahead are bounded in bytes,
// not in count: a call cut in many small pieces (a ramp of them,
// hierPieceBounds) keeps as many bytes posted as one of a few large
// ones, where a whole chunk buffer a receive held back a WAN receive's
// posting behind a handful of small LAN ones (the lab grid's 64 MiB in
// virtual time over MetaRoCE, with a ramp of 4 halvings at each end:
// 86.8 % of the WAN bound with a buffer a receive, 93.5 % with four times
// as many buffers, 92.4 % with this arena and hierAhead).
type hierArena struct {
	bufs   [][]byte
	size   int          // bytes per buffer
	head   int          // the next block's virtual offset (buffer b at b*size, modulo len(bufs))
	tail   int          // the oldest live block's virtual offset (head when none is)
	blocks []arenaBlock // from the oldest live block, in the order lent
	first  int          // the id of blocks[0]
}

type arenaBlock struct {
	start, end int
	freed      bool
}

// lend returns n bytes and the block's id, or ok false when the ring has
// no room for them before its tail. An empty ring always has room for a
// chunk (n <= size).
func (a *hierArena) lend(n int) (buf []byte, id int, ok bool) {
	if len(a.blocks) == 0 {
		a.tail = a.head
	}
	s := a.head
	if s%a.size+n > a.size {
		s += a.size - s%a.size // the next buffer's start
	}
	if s+n-a.tail > len(a.bufs)*a.size {
		return nil, 0, false
	}
	a.head = s + n
	a.blocks = append(a.blocks, arenaBlock{start: s, end: s + n})
	b := a.bufs[(s/a.size)%len(a.bufs)]
	return b[s%a.size : s%a.size+n], a.first + len(a.blocks) - 1, true
}

// free gives block id back; the tail passes every freed block at the front.
func (a *hierArena) free(id int) {
	a.blocks[id-a.first].freed = true
	k := 0
	for k < len(a.blocks) && a.blocks[k].freed {
		k++
	}
	if k == 0 {
		return
	}
	a.first += k
	a.blocks = append(a.blocks[:0], a.blocks[k:]...)
	if len(a.blocks) > 0 {
		a.tail = a.blocks[0].start
	} else {
		a.tail = a.head
	}
}
