package collective

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/gocoll/gocoll/collective/dtype"
)

// NoColor passed to Split leaves the caller out of every new communicator.
const NoColor = -1

// Split partitions the communicator: ranks that pass the same color form a
// new communicator, ordered by key and then by rank here (like
// ncclCommSplit and MPI_Comm_split). A rank passing NoColor gets nil. Split
// is a collective: every rank must call it.
//
// A color below NoColor is an error on every rank: the check runs inside
// the operation, so the rank that made it aborts the Split on the others
// and every rank stays in step.
func (c *Comm) Split(ctx context.Context, color, key int) (*Comm, error) {
	c.mu.Lock()
	seq := c.splits
	c.splits++
	c.mu.Unlock()

	var bad error
	if color < NoColor {
		bad = fmt.Errorf("Split color %d is negative (NoColor is %d)", color, NoColor)
	}
	mine := []int64{int64(color), int64(key)}
	all := make([]int64, 2*c.Size())
	if err := c.splitGather(ctx, bad, asBytes(mine), asBytes(all)); err != nil {
		return nil, fmt.Errorf("collective: Split: %w", err)
	}
	if color == NoColor {
		return nil, nil
	}
	members := splitMembers(all, color)
	ranks := make([]int, len(members))
	newRank := -1
	for i, m := range members {
		ranks[i] = c.ranks[m]
		if m == c.rank {
			newRank = i
		}
	}
	sub, err := newComm(c.ep, splitID(c.id, seq, color), ranks, newRank, c.cfg)
	if err != nil {
		return nil, err
	}
	sub.topo = subTopology(c.topo, members)
	sub.flight = c.flight
	return sub, nil
}

// splitGather gathers every rank's send into recv, as the Split
// operation; a non-nil bad (this rank's invalid argument) fails it, here
// and, through its abort, on every other rank.
func (c *Comm) splitGather(ctx context.Context, bad error, send, recv []byte) error {
	h := header{kind: KindSplit, dt: dtype.Uint8, root: -1, count: uint64(len(send)), algo: AlgoRing, chunk: uint32(c.cfg.ChunkBytes)}
	return c.launch(ctx, h, nil, true, func(o *operation) error {
		if bad != nil {
			return bad
		}
		copy(recv[c.rank*len(send):], send)
		if c.Size() == 1 {
			return nil
		}
		return c.allGatherRing(o, recv, len(send), 1)
	}).err
}

// splitMembers returns the parent ranks with the given color, sorted by
// (key, parent rank). all holds (color, key) pairs by parent rank.
func splitMembers(all []int64, color int) []int {
	var members []int
	for r := 0; r < len(all)/2; r++ {
		if all[2*r] == int64(color) {
			members = append(members, r)
		}
	}
	// Stable, so equal keys keep parent rank order.
	slices.SortStableFunc(members, func(a, b int) int { return cmp.Compare(all[2*a+1], all[2*b+1]) })
	return members
}

func splitID(parent, seq uint64, color int) uint64 {
	h := fnv.New64a()
	var b [24]byte
	binary.LittleEndian.PutUint64(b[0:], parent)
	binary.LittleEndian.PutUint64(b[8:], seq)
	binary.LittleEndian.PutUint64(b[16:], uint64(color))
	h.Write(b[:])
	return h.Sum64()
}
