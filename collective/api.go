package collective

import (
	"context"

	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
)

// Op is a reduction operation: Sum, Prod, Min, Max or Avg.
type Op = reduce.Op

// The reduction operations.
const (
	Sum  = reduce.Sum
	Prod = reduce.Prod
	Min  = reduce.Min
	Max  = reduce.Max
	Avg  = reduce.Avg
)

// Element is the set of element types collectives accept.
type Element = dtype.Element

// AllReduce reduces send element-wise across all ranks with op and leaves
// the result in every rank's recv (len(recv) == len(send)). Pass the same
// slice twice to reduce in place.
func AllReduce[T Element](ctx context.Context, c *Comm, send, recv []T, op Op) error {
	return c.allReduce(ctx, asBytes(send), asBytes(recv), dtype.Of[T](), op, true).err
}

// AllReduceAsync is AllReduce without waiting; ctx bounds the operation.
// The buffers must not be touched until the Handle is done.
func AllReduceAsync[T Element](ctx context.Context, c *Comm, send, recv []T, op Op) *Handle {
	return c.allReduce(ctx, asBytes(send), asBytes(recv), dtype.Of[T](), op, false)
}

// Broadcast copies root's send into every rank's recv (root's included,
// unless send and recv are the same slice). send is read only at root.
func Broadcast[T Element](ctx context.Context, c *Comm, send, recv []T, root int) error {
	return c.broadcast(ctx, asBytes(send), asBytes(recv), dtype.Of[T](), root, true).err
}

// BroadcastAsync is Broadcast without waiting.
func BroadcastAsync[T Element](ctx context.Context, c *Comm, send, recv []T, root int) *Handle {
	return c.broadcast(ctx, asBytes(send), asBytes(recv), dtype.Of[T](), root, false)
}

// Reduce reduces send element-wise across all ranks into root's recv
// (len(send) elements). recv is used only at root and may be nil elsewhere.
func Reduce[T Element](ctx context.Context, c *Comm, send, recv []T, op Op, root int) error {
	return c.reduceOp(ctx, asBytes(send), asBytes(recv), dtype.Of[T](), op, root, true).err
}

// ReduceAsync is Reduce without waiting.
func ReduceAsync[T Element](ctx context.Context, c *Comm, send, recv []T, op Op, root int) *Handle {
	return c.reduceOp(ctx, asBytes(send), asBytes(recv), dtype.Of[T](), op, root, false)
}

// AllGather gathers every rank's send into every rank's recv, rank r's at
// recv[r*len(send):]. In place: send is recv[rank*len(send):(rank+1)*len(send)].
func AllGather[T Element](ctx context.Context, c *Comm, send, recv []T) error {
	return c.allGather(ctx, asBytes(send), asBytes(recv), dtype.Of[T](), true).err
}

// AllGatherAsync is AllGather without waiting.
func AllGatherAsync[T Element](ctx context.Context, c *Comm, send, recv []T) *Handle {
	return c.allGather(ctx, asBytes(send), asBytes(recv), dtype.Of[T](), false)
}

// ReduceScatter reduces send (Size blocks of len(recv) elements) across all
// ranks and leaves block r of the result in rank r's recv. In place: recv is
// send[rank*len(recv):(rank+1)*len(recv)].
func ReduceScatter[T Element](ctx context.Context, c *Comm, send, recv []T, op Op) error {
	return c.reduceScatter(ctx, asBytes(send), asBytes(recv), dtype.Of[T](), op, true).err
}

// ReduceScatterAsync is ReduceScatter without waiting.
func ReduceScatterAsync[T Element](ctx context.Context, c *Comm, send, recv []T, op Op) *Handle {
	return c.reduceScatter(ctx, asBytes(send), asBytes(recv), dtype.Of[T](), op, false)
}

// AllToAll sends block j of send (Size equal blocks) to rank j and receives
// rank i's block into block i of recv. send and recv must not overlap.
func AllToAll[T Element](ctx context.Context, c *Comm, send, recv []T) error {
	return c.allToAll(ctx, asBytes(send), asBytes(recv), dtype.Of[T](), true).err
}

// AllToAllAsync is AllToAll without waiting.
func AllToAllAsync[T Element](ctx context.Context, c *Comm, send, recv []T) *Handle {
	return c.allToAll(ctx, asBytes(send), asBytes(recv), dtype.Of[T](), false)
}

// AllToAllV sends sendCounts[j] elements at send[sendDispls[j]:] to rank j
// and receives recvCounts[i] elements from rank i at recv[recvDispls[i]:].
// Rank i's sendCounts[j] must equal rank j's recvCounts[i]; every rank
// checks, and a disagreement is an error on every rank.
func AllToAllV[T Element](ctx context.Context, c *Comm, send []T, sendCounts, sendDispls []int, recv []T, recvCounts, recvDispls []int) error {
	return c.allToAllV(ctx, asBytes(send), sendCounts, sendDispls, asBytes(recv), recvCounts, recvDispls, dtype.Of[T](), true).err
}

// AllToAllVAsync is AllToAllV without waiting.
func AllToAllVAsync[T Element](ctx context.Context, c *Comm, send []T, sendCounts, sendDispls []int, recv []T, recvCounts, recvDispls []int) *Handle {
	return c.allToAllV(ctx, asBytes(send), sendCounts, sendDispls, asBytes(recv), recvCounts, recvDispls, dtype.Of[T](), false)
}

// Gather collects every rank's send into root's recv, rank r's at
// recv[r*len(send):]. recv is used only at root.
func Gather[T Element](ctx context.Context, c *Comm, send, recv []T, root int) error {
	return c.gather(ctx, asBytes(send), asBytes(recv), dtype.Of[T](), root, true).err
}

// GatherAsync is Gather without waiting.
func GatherAsync[T Element](ctx context.Context, c *Comm, send, recv []T, root int) *Handle {
	return c.gather(ctx, asBytes(send), asBytes(recv), dtype.Of[T](), root, false)
}

// Scatter sends block r of root's send (Size blocks of len(recv)) to rank
// r's recv. send is used only at root.
func Scatter[T Element](ctx context.Context, c *Comm, send, recv []T, root int) error {
	return c.scatter(ctx, asBytes(send), asBytes(recv), dtype.Of[T](), root, true).err
}

// ScatterAsync is Scatter without waiting.
func ScatterAsync[T Element](ctx context.Context, c *Comm, send, recv []T, root int) *Handle {
	return c.scatter(ctx, asBytes(send), asBytes(recv), dtype.Of[T](), root, false)
}

// Send sends buf to rank peer. Sends to a peer match its Recvs from this
// rank in order. It returns once the transport is done with buf.
func Send[T Element](ctx context.Context, c *Comm, buf []T, peer int) error {
	return c.sendTo(ctx, asBytes(buf), dtype.Of[T](), peer, true).err
}

// SendAsync is Send without waiting.
func SendAsync[T Element](ctx context.Context, c *Comm, buf []T, peer int) *Handle {
	return c.sendTo(ctx, asBytes(buf), dtype.Of[T](), peer, false)
}

// Recv receives from rank peer into buf; the message must have exactly
// len(buf) elements of the same type.
func Recv[T Element](ctx context.Context, c *Comm, buf []T, peer int) error {
	return c.recvFrom(ctx, asBytes(buf), dtype.Of[T](), peer, true).err
}

// RecvAsync is Recv without waiting.
func RecvAsync[T Element](ctx context.Context, c *Comm, buf []T, peer int) *Handle {
	return c.recvFrom(ctx, asBytes(buf), dtype.Of[T](), peer, false)
}

// Barrier returns once every rank of the communicator has called it.
func (c *Comm) Barrier(ctx context.Context) error { return c.barrier(ctx, true).err }

// BarrierAsync is Barrier without waiting.
func (c *Comm) BarrierAsync(ctx context.Context) *Handle { return c.barrier(ctx, false) }
