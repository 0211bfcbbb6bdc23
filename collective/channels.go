package collective

import "github.com/gocoll/gocoll/collective/tune"

// Channels (as NCCL's): a large ring AllReduce is cut in C contiguous
// parts, and part c runs on a ring of its own: rank r sends to r+s_c and
// receives from r-s_c (mod n), s_c the c-th of the strides coprime to n
// (1, n-1, 2, n-2, ...). Distinct strides use distinct directed pairs of
// ranks, so the channels share no connection direction: each has its own
// messages in flight, and with s = 1 and n-1 both directions of every
// link carry data. One goroutine drives every channel's ring, step by step
// in turn, so each pair's messages keep one order on both ends.

// ChannelsMax bounds Config.Channels.
const ChannelsMax = tune.ChannelsMax

// channelStrides returns up to c strides for rings over n ranks, each
// coprime to n, all distinct mod n: tune.ChannelStrides, which the cost
// model takes too.
func channelStrides(n, c int) []int { return tune.ChannelStrides(n, c) }

// ringStrides returns the strides of the rings a ring AllReduce of count
// elements of es bytes runs on (tune.RingStrides): Config.Channels of them,
// or where it is 0 the count the cost model predicts fastest for the
// topology and the size (modelChannels; 1 without a topology across
// hosts); fewer where the world size has fewer strides or a part would be
// under a chunk. The operation's header carries how many, so ranks whose
// Config.Channels differ fail with a mismatch instead of waiting on rings
// that never meet.
func (c *Comm) ringStrides(count, es int) []int {
	ch := c.cfg.Channels
	if ch == 0 {
		ch = c.modelChannels(count * es)
	}
	return tune.RingStrides(c.Size(), ch, count*es, c.cfg.ChunkBytes)
}

// allReduceChannels all-reduces send into recv over the channels of
// ringStrides, one ring each, on a part of the buffer each; with one
// channel it is allReduceRing.
func (c *Comm) allReduceChannels(o *operation, send, recv []byte, count int, spec reduceSpec) error {
	n, es := c.Size(), spec.dt.Size()
	strides := c.ringStrides(count, es)
	if len(strides) <= 1 {
		return c.allReduceRing(o, send, recv, count, spec)
	}
	parts := newGeometry(count, len(strides), es, 0).off
	rings := make([]*ring, len(strides))
	total := 0
	for ch, s := range strides {
		lo, hi := parts[ch], parts[ch+1]
		inv := 1 // s*inv == 1 mod n: rank r is at position r*inv of the ring
		for s*inv%n != 1 {
			inv++
		}
		a := &allReduceRing{g: newGeometry((hi-lo)/es, n, es, c.cfg.ChunkBytes),
			n: n, r: c.rank * inv % n, send: send[lo:hi], recv: recv[lo:hi], spec: spec}
		g := newRing(o, 2*(n-1), a.g.k)
		g.left, g.right = mod(c.rank-s, n), mod(c.rank+s, n)
		g.depth = allReduceRingDepth(g.depth, n, a.g.k)
		a.ring = g
		bufs := c.scratch.get(g.depth)
		defer c.scratch.put(bufs)
		a.tmp = bufs
		if err := g.start(a); err != nil {
			return err
		}
		rings[ch] = g
		total = max(total, g.steps*g.k)
	}
	for i := range total {
		for _, g := range rings {
			if i < g.steps*g.k {
				if err := g.step(i); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
