package collective

import (
	"context"

	"github.com/gocoll/gocoll/collective/dtype"
)

// The Bytes forms take raw little-endian buffers and a data type chosen at
// run time (benchmarks, bindings). Their semantics are those of the typed
// functions of the same name; lengths are in bytes and must be whole
// elements.

// AllReduceBytes is AllReduce on raw buffers of type dt.
func (c *Comm) AllReduceBytes(ctx context.Context, send, recv []byte, dt dtype.DataType, op Op) error {
	return c.allReduce(ctx, send, recv, dt, op, true).err
}

// BroadcastBytes is Broadcast on raw buffers of type dt.
func (c *Comm) BroadcastBytes(ctx context.Context, send, recv []byte, dt dtype.DataType, root int) error {
	return c.broadcast(ctx, send, recv, dt, root, true).err
}

// ReduceBytes is Reduce on raw buffers of type dt.
func (c *Comm) ReduceBytes(ctx context.Context, send, recv []byte, dt dtype.DataType, op Op, root int) error {
	return c.reduceOp(ctx, send, recv, dt, op, root, true).err
}

// AllGatherBytes is AllGather on raw buffers of type dt.
func (c *Comm) AllGatherBytes(ctx context.Context, send, recv []byte, dt dtype.DataType) error {
	return c.allGather(ctx, send, recv, dt, true).err
}

// ReduceScatterBytes is ReduceScatter on raw buffers of type dt.
func (c *Comm) ReduceScatterBytes(ctx context.Context, send, recv []byte, dt dtype.DataType, op Op) error {
	return c.reduceScatter(ctx, send, recv, dt, op, true).err
}

// AllToAllBytes is AllToAll on raw buffers of type dt.
func (c *Comm) AllToAllBytes(ctx context.Context, send, recv []byte, dt dtype.DataType) error {
	return c.allToAll(ctx, send, recv, dt, true).err
}

// GatherBytes is Gather on raw buffers of type dt.
func (c *Comm) GatherBytes(ctx context.Context, send, recv []byte, dt dtype.DataType, root int) error {
	return c.gather(ctx, send, recv, dt, root, true).err
}

// ScatterBytes is Scatter on raw buffers of type dt.
func (c *Comm) ScatterBytes(ctx context.Context, send, recv []byte, dt dtype.DataType, root int) error {
	return c.scatter(ctx, send, recv, dt, root, true).err
}

// SendBytes is Send on a raw buffer of type dt.
func (c *Comm) SendBytes(ctx context.Context, buf []byte, dt dtype.DataType, peer int) error {
	return c.sendTo(ctx, buf, dt, peer, true).err
}

// RecvBytes is Recv on a raw buffer of type dt.
func (c *Comm) RecvBytes(ctx context.Context, buf []byte, dt dtype.DataType, peer int) error {
	return c.recvFrom(ctx, buf, dt, peer, true).err
}
