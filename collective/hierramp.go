package collective

import (
	"slices"

	"github.com/gocoll/gocoll/collective/tune"
)

// The ramp of the pieces: the first even piece is cut in halves
// hierRampUp times and the last hierRampDown times (1/8, 1/8, 1/4, 1/2 of
// a piece at the start; 1/2, 1/4, 1/8, 1/16, 1/16 at the end). The WAN
// waits for the first piece's reduce-scatters before it carries anything
// and the call for the last piece's all-gathers after it is done, so
// small pieces there shorten both, while the pieces between keep their
// size. The lab's 2 x 2 x 2 grid over MetaRoCE in virtual time, with a
// site's shared memory and LAN at 1.2 GB/s (TestWANSimHierarchical,
// WAN_SIM_LOCAL_MBS=300, control class first): 16 MiB (4 pieces of
// 4 MiB) 80.8-82.5 % of the WAN bound before, the WAN idle for the first
// ~17 ms and the last ~10 ms of a ~204 ms call. Each halving doubles the
// next piece, which its reduce-scatter must keep up with while the WAN
// carries the piece before: with a host and site level only twice the
// WAN's rate (TestHierarchicalChunksOverlapTheLevels) 4 halvings at the
// start were too many (84 % of the bound against 96 %), 3 are not. The
// cost model prices the same ramp (tune.HierRampUp, tune.HierRampDown).
const (
	hierRampUp   = tune.HierRampUp
	hierRampDown = tune.HierRampDown
)

// hierPieceBounds returns the byte offsets of the pieces an AllReduce of
// bytes (elements of es bytes) is cut in: hierPieces even pieces, the
// first and the last cut in a ramp (hierRampUp, hierRampDown) when there
// are two or more and ramp is set (Comm.hierRamp). Every rank computes
// the same.
func hierPieceBounds(bytes, chunkBytes, ranks, es int, ramp bool) []int {
	p := hierPieces(bytes, chunkBytes, ranks)
	even := regionGeometry(0, bytes, p, es)
	if p < 2 || !ramp {
		return even
	}
	out := []int{0}
	cut := func(lo, hi, halvings int, down bool) {
		var parts []int // in elements: halves of the rest, then the rest
		rest := (hi - lo) / es
		for range halvings {
			parts = append(parts, rest/2)
			rest -= rest / 2
		}
		parts = append(parts, rest)
		if !down {
			slices.Reverse(parts)
		}
		for _, x := range parts {
			if x > 0 {
				out = append(out, out[len(out)-1]+x*es)
			}
		}
	}
	for q := range p {
		switch q {
		case 0:
			cut(even[0], even[1], hierRampUp, false)
		case p - 1:
			cut(even[q], even[q+1], hierRampDown, true)
		default:
			out = append(out, even[q+1])
		}
	}
	return out
}

// hierRampKey caches Comm.hierRamp's answers in Comm.choices, by priced
// size.
type hierRampKey struct{ bytes int }

// hierRamp reports whether the pipelined hierarchical AllReduce of bytes
// cuts its first and last pieces in a ramp: the cost model's answer
// (tune.HierRamp) at PricedBytes(bytes), with the topology's link figures
// and tune.DefaultLinks for those it lacks (as modelAlgorithm), cached.
// The ramp pays only where the lower levels take a noticeable share of
// the top level's time a piece; elsewhere its seven more pieces cost
// their steps (gocoll sim, the lab's 2 x 2 x 2 grid at the sim's default
// links, 4 MiB: 44.7 ms even, 46.3 ramped). Without a topology: the ramp.
func (c *Comm) hierRamp(bytes int) bool {
	if c.topo == nil {
		return true
	}
	key := hierRampKey{PricedBytes(bytes)}
	if r, ok := c.choices.Load(key); ok {
		return r.(bool)
	}
	r := tune.HierRamp(tune.Input{Topology: *c.topo, Bytes: key.bytes, ChunkBytes: c.cfg.ChunkBytes, Links: tune.DefaultLinks()})
	c.choices.Store(key, r)
	return r
}
