package collectivetest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
	"github.com/gocoll/gocoll/topology"
)

// algoSets are the communicator configurations every reduction runs under:
// the large-message algorithms and the small-message ones, forced.
var algoSets = []algoSet{
	{name: "ring", allReduce: collective.AlgoRing, broadcast: collective.AlgoChain, reduce: collective.AlgoChain},
	{name: "tree", allReduce: collective.AlgoRecursiveDoubling, broadcast: collective.AlgoBinomial, reduce: collective.AlgoBinomial},
	// Ring AllReduce on 3 channels (fewer where n has fewer strides or the
	// buffer fewer chunks: the table's small counts run on one).
	{name: "ring/3 channels", allReduce: collective.AlgoRing, channels: 3, allReduceOnly: true},
	{name: "direct", allReduce: collective.AlgoDirect, broadcast: collective.AlgoDirect, reduce: collective.AlgoChain},
	// The shared-memory board, forced up to what its slot holds (a
	// transport without boards runs the point-to-point algorithms).
	{name: "board", allReduce: collective.AlgoBoard, broadcast: collective.AlgoBoard, reduce: collective.AlgoBinomial, skipReduce: true, skipRS: true},
	// The board's AllReduce folding in shards (two rounds) from 2 bytes on.
	{name: "board/split", allReduce: collective.AlgoBoard, boardSplit: 1, allReduceOnly: true},
	// The algorithms that follow the topology run on an uneven, cyclic
	// placement (unevenTopology), for a few types (their code does not
	// depend on the type beyond its size), and skip what they do not change.
	{name: "dbtree", allReduce: collective.AlgoTree, broadcast: collective.AlgoTree, reduce: collective.AlgoTree,
		channels: 1, placed: true, dtypes: placedTypes, skipRS: true},
	{name: "dbtree/3 channels", allReduce: collective.AlgoTree, broadcast: collective.AlgoTree, reduce: collective.AlgoTree,
		channels: 3, placed: true, dtypes: fewTypes, skipRS: true},
	// The flat algorithms on the same placement, for two types: their
	// code reads no topology, but the choices around them do (the rings'
	// channels, 3 here), and their rank order crosses hosts and sites at
	// most steps.
	{name: "ring/3 channels, placed", allReduce: collective.AlgoRing, broadcast: collective.AlgoChain, reduce: collective.AlgoChain,
		channels: 3, placed: true, dtypes: fewTypes, skipRS: true},
	{name: "tree, placed", allReduce: collective.AlgoRecursiveDoubling, broadcast: collective.AlgoBinomial, reduce: collective.AlgoBinomial,
		placed: true, dtypes: fewTypes, skipRS: true},
	{name: "direct, placed", allReduce: collective.AlgoDirect, broadcast: collective.AlgoDirect,
		placed: true, dtypes: fewTypes[:1], skipRS: true, skipReduce: true},
	{name: "hierarchical", allReduce: collective.AlgoHierarchical, broadcast: collective.AlgoHierarchical,
		reduceScatter: collective.AlgoHierarchical, allGather: collective.AlgoHierarchical,
		placed: true, dtypes: placedTypes, skipReduce: true},
}

// algoSet is one entry of algoSets.
type algoSet struct {
	name                         string
	allReduce, broadcast, reduce collective.Algorithm
	reduceScatter, allGather     collective.Algorithm // AllGather runs in a set only where forced
	channels                     int                  // Config.Channels
	boardSplit                   int                  // Config.BoardSplitBytes
	placed                       bool                 // Config.Topology is unevenTopology
	dtypes                       []dtype.DataType     // nil: every type
	skipRS                       bool                 // ReduceScatter is the same as in another set
	skipReduce                   bool                 // Reduce is the same as in another set
	allReduceOnly                bool                 // Broadcast and Reduce are the same as in another set
}

var (
	placedTypes = []dtype.DataType{dtype.Float32, dtype.BFloat16Type, dtype.Int8, dtype.Float64}
	fewTypes    = []dtype.DataType{dtype.Float32, dtype.Int8} // a float and an odd element size
)

// runs reports whether the set runs for dt.
func (s algoSet) runs(dt dtype.DataType) bool {
	return s.dtypes == nil || slices.Contains(s.dtypes, dt)
}

// unevenTopology places n ranks cyclically (rank r on host r mod h, as
// Slurm's cyclic distribution), on hosts of different sizes (the last rank
// alone on its host from 4 ranks on), hosts alternating between two sites
// (of different sizes when the hosts are odd in number).
func unevenTopology(n int) *topology.Topology {
	h := max(1, (n+2)/3)
	ranks := make([]topology.RankInfo, n)
	local := map[string]int{}
	for r := range n {
		hi := r % h
		host := fmt.Sprintf("host%d", hi)
		if n >= 4 && r == n-1 {
			host, hi = "solo", h
		}
		site := []string{"east", "west"}[hi%2]
		ranks[r] = topology.RankInfo{Rank: r, Host: host, Site: site, LocalRank: local[host]}
		local[host]++
	}
	t, err := topology.New(ranks)
	if err != nil {
		panic("collectivetest: unevenTopology: " + err.Error())
	}
	return &t
}

// checkReductions runs AllReduce (in and out of place), Reduce and
// ReduceScatter (in and out of place) for every op, under every algorithm
// set, and compares each rank's result with the reference.
func checkReductions(t *testing.T, w *world, count int, dt dtype.DataType, ops []reduce.Op) {
	n := len(w.comms)
	blk := blockCount(count, n)
	for _, op := range ops {
		ref := reference(dt, op, n, count)
		rsRef := reference(dt, op, n, n*blk)
		root := (count + int(op)) % n
		for si, set := range w.sets {
			as := algoSets[si]
			if !as.runs(dt) {
				continue
			}
			name := fmt.Sprintf("count=%d/%v/%v/%s", count, dt, op, as.name)
			// AllReduce, out of place then in place.
			w.runSet(t, set, name+"/AllReduce", func(ctx context.Context, r int, c *collective.Comm) error {
				in := input(dt, op, r, count)
				out := make([]byte, len(in))
				if err := c.AllReduceBytes(ctx, in, out, dt, op); err != nil {
					return err
				}
				if err := c.AllReduceBytes(ctx, in, in, dt, op); err != nil {
					return err
				}
				return firstErr(compare("out of place", dt, out, ref), compare("in place", dt, in, ref))
			})
			if as.allReduceOnly {
				continue
			}
			if !as.skipReduce {
				checkReduce(t, w, set, name, count, dt, op, root, ref)
			}
			if as.skipRS {
				continue
			}
			w.runSet(t, set, name+"/ReduceScatter", func(ctx context.Context, r int, c *collective.Comm) error {
				in := input(dt, op, r, n*blk)
				out := make([]byte, blk*dt.Size())
				if err := c.ReduceScatterBytes(ctx, in, out, dt, op); err != nil {
					return err
				}
				mine := in[r*len(out) : (r+1)*len(out)]
				if err := c.ReduceScatterBytes(ctx, in, mine, dt, op); err != nil {
					return err
				}
				want := rsRef[r*len(out) : (r+1)*len(out)]
				return firstErr(compare("out of place", dt, out, want), compare("in place", dt, mine, want))
			})
		}
	}
}

// checkReduce runs Reduce to root on set and compares root's result with ref.
func checkReduce(t *testing.T, w *world, set []*collective.Comm, name string, count int, dt dtype.DataType, op reduce.Op, root int, ref []byte) {
	w.runSet(t, set, name+"/Reduce", func(ctx context.Context, r int, c *collective.Comm) error {
		in := input(dt, op, r, count)
		var out []byte
		if r == root {
			out = make([]byte, len(in))
		}
		if err := c.ReduceBytes(ctx, in, out, dt, op, root); err != nil {
			return err
		}
		if r == root {
			return compare(fmt.Sprintf("root %d", root), dt, out, ref)
		}
		return nil
	})
}

// blockCount is the per-rank block of the collectives whose buffers are n
// blocks: about count/n, so the total stays near count, but never 0 unless
// count is.
func blockCount(count, n int) int { return (count + n - 1) / n }

// compare reports the first element where got differs from want.
func compare(what string, dt dtype.DataType, got, want []byte) error {
	if bytes.Equal(got, want) {
		return nil
	}
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d bytes, want %d", what, len(got), len(want))
	}
	s := dt.Size()
	for i := 0; i < len(got)/s; i++ {
		if !bytes.Equal(got[i*s:(i+1)*s], want[i*s:(i+1)*s]) {
			return fmt.Errorf("%s: element %d is %v, want %v", what, i, decode(dt, got, i), decode(dt, want, i))
		}
	}
	return fmt.Errorf("%s: differs", what)
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
