package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
)

// collKind names a benchmarked collective.
type collKind uint8

// The benchmarked collectives, in the order "all" runs them.
const (
	collAllReduce collKind = iota
	collBroadcast
	collReduce
	collAllGather
	collReduceScatter
	collAllToAll
	collSendRecv
	numColls
)

// collInfo describes one benchmarked collective.
type collInfo struct {
	name    string
	reduces bool // takes -o
	rooted  bool // takes -r
	inPlace bool // has an in-place form (gocoll's AllToAll and SendRecv do not)
	// algos lists the --algo values it accepts besides auto.
	algos []collective.Algorithm
	// blocked: nccl-tests' size S is the whole array of n blocks (AllGather,
	// ReduceScatter, AllToAll), whose count column is one block.
	blocked bool
	// busFactor is nccl-tests' busbw/algbw factor (their PERFORMANCE.md).
	busFactor func(n int) float64
}

var colls = [numColls]collInfo{
	collAllReduce: {name: "allreduce", reduces: true, inPlace: true,
		algos:     []collective.Algorithm{collective.AlgoRing, collective.AlgoRecursiveDoubling, collective.AlgoDirect, collective.AlgoTree, collective.AlgoHierarchical},
		busFactor: func(n int) float64 { return 2 * float64(n-1) / float64(n) }},
	collBroadcast: {name: "broadcast", rooted: true, inPlace: true,
		algos:     []collective.Algorithm{collective.AlgoChain, collective.AlgoBinomial, collective.AlgoDirect, collective.AlgoTree, collective.AlgoHierarchical},
		busFactor: func(int) float64 { return 1 }},
	collReduce: {name: "reduce", reduces: true, rooted: true, inPlace: true,
		algos:     []collective.Algorithm{collective.AlgoChain, collective.AlgoBinomial, collective.AlgoTree},
		busFactor: func(int) float64 { return 1 }},
	collAllGather: {name: "allgather", inPlace: true, blocked: true,
		algos:     []collective.Algorithm{collective.AlgoRing, collective.AlgoHierarchical},
		busFactor: func(n int) float64 { return float64(n-1) / float64(n) }},
	collReduceScatter: {name: "reducescatter", reduces: true, inPlace: true, blocked: true,
		algos:     []collective.Algorithm{collective.AlgoRing, collective.AlgoHierarchical},
		busFactor: func(n int) float64 { return float64(n-1) / float64(n) }},
	collAllToAll: {name: "alltoall", blocked: true,
		algos:     []collective.Algorithm{collective.AlgoPairwise},
		busFactor: func(n int) float64 { return float64(n-1) / float64(n) }},
	collSendRecv: {name: "sendrecv",
		algos:     []collective.Algorithm{collective.AlgoDirect},
		busFactor: func(int) float64 { return 1 }},
}

func (k collKind) info() *collInfo { return &colls[k] }

func (k collKind) String() string { return colls[k].name }

// collNames lists the collectives' names, "|"-separated.
func collNames() string {
	names := make([]string, numColls)
	for k := range numColls {
		names[k] = colls[k].name
	}
	return strings.Join(names, "|")
}

// parseColls reads a comma-separated list of collective names, or "all".
func parseColls(s string) ([]collKind, error) {
	if s == "all" {
		out := make([]collKind, numColls)
		for k := range numColls {
			out[k] = k
		}
		return out, nil
	}
	var out []collKind
	for name := range strings.SplitSeq(s, ",") {
		k, ok := findColl(name)
		if !ok {
			return nil, fmt.Errorf("unknown collective %s (want %s, a comma-separated list of them, or all)", quoteArg(name), collNames())
		}
		if slices.Contains(out, k) {
			return nil, fmt.Errorf("collective %s named twice", quoteArg(name))
		}
		out = append(out, k)
	}
	return out, nil
}

func findColl(name string) (collKind, bool) {
	for k := range numColls {
		if colls[k].name == name {
			return k, true
		}
	}
	return 0, false
}

// checkAlgo reports an --algo the collective does not have.
func (c *collInfo) checkAlgo(a collective.Algorithm) error {
	if a == collective.AlgoAuto || slices.Contains(c.algos, a) {
		return nil
	}
	names := make([]string, len(c.algos))
	for i, x := range c.algos {
		names[i] = x.String()
	}
	return fmt.Errorf("%s has no algorithm %q (want auto or %s)", c.name, a, strings.Join(names, "|"))
}

// geometry is one benchmarked size, laid out as nccl-tests does.
type geometry struct {
	bytes int64 // the size column: the larger of the send and receive buffers
	count int64 // the count column: elements per rank (per block if blocked)
	block int64 // bytes of one block, or of the whole buffer if not blocked
}

// geometryFor lays out a requested size of req bytes of type t over n ranks:
// count = req/typesize elements, cut into n blocks of count/n elements for
// the blocked collectives, so the size may shrink to a whole number of
// (blocks of) elements. roundUp rounds to one element per block instead (as
// the shared peers' benchmarks do for AllToAll).
func (c *collInfo) geometryFor(req int64, t dtype.DataType, n int, roundUp bool) geometry {
	ts := int64(t.Size())
	count := req / ts
	if roundUp && count*ts < req {
		count++
	}
	if !c.blocked {
		return geometry{bytes: count * ts, count: count, block: count * ts}
	}
	per := count / int64(n)
	if roundUp && per*int64(n) < count {
		per++
	}
	return geometry{bytes: per * int64(n) * ts, count: per, block: per * ts}
}

// opArgs is everything one call of a collective needs.
type opArgs struct {
	comm       *collective.Comm
	send, recv []byte
	dt         dtype.DataType
	op         reduce.Op
	root       int
}

// call runs collective k once, blocking.
func (k collKind) call(ctx context.Context, a opArgs) error {
	c := a.comm
	switch k {
	case collAllReduce:
		return c.AllReduceBytes(ctx, a.send, a.recv, a.dt, a.op)
	case collBroadcast:
		return c.BroadcastBytes(ctx, a.send, a.recv, a.dt, a.root)
	case collReduce:
		return c.ReduceBytes(ctx, a.send, a.recv, a.dt, a.op, a.root)
	case collAllGather:
		return c.AllGatherBytes(ctx, a.send, a.recv, a.dt)
	case collReduceScatter:
		return c.ReduceScatterBytes(ctx, a.send, a.recv, a.dt, a.op)
	case collAllToAll:
		return c.AllToAllBytes(ctx, a.send, a.recv, a.dt)
	case collSendRecv:
		return sendRecv(ctx, a)
	}
	panic(fmt.Sprintf("bench: no call for collective %d", k))
}

// sendRecv sends to the next rank and receives from the previous one, both
// in flight at once (as nccl-tests' sendrecv does). The messages travel as
// bytes: point-to-point calls do not reduce, so the type only scales counts.
func sendRecv(ctx context.Context, a opArgs) error {
	n, r := a.comm.Size(), a.comm.Rank()
	recv := collective.RecvAsync(ctx, a.comm, a.recv, (r-1+n)%n)
	send := collective.SendAsync(ctx, a.comm, a.send, (r+1)%n)
	errRecv := recv.Wait(ctx)
	if err := send.Wait(ctx); err != nil {
		return err
	}
	return errRecv
}
