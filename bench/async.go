package bench

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/dtype"
)

// start issues collective k once without waiting (the collective
// package's Async calls), on a's buffers seen as elements of a.dt, and
// returns what to wait for.
func (k collKind) start(ctx context.Context, a opArgs) []*collective.Handle {
	if k == collSendRecv {
		n, r := a.comm.Size(), a.comm.Rank()
		return []*collective.Handle{
			collective.RecvAsync(ctx, a.comm, a.recv, (r-1+n)%n),
			collective.SendAsync(ctx, a.comm, a.send, (r+1)%n),
		}
	}
	return []*collective.Handle{k.startTyped(ctx, a)}
}

func (k collKind) startTyped(ctx context.Context, a opArgs) *collective.Handle {
	switch a.dt {
	case dtype.Float32:
		return startAs[float32](ctx, k, a)
	case dtype.Float64:
		return startAs[float64](ctx, k, a)
	case dtype.BFloat16Type:
		return startAs[dtype.BFloat16](ctx, k, a)
	case dtype.Float16Type:
		return startAs[dtype.Float16](ctx, k, a)
	case dtype.Int8:
		return startAs[int8](ctx, k, a)
	case dtype.Uint8:
		return startAs[uint8](ctx, k, a)
	case dtype.Int32:
		return startAs[int32](ctx, k, a)
	case dtype.Uint32:
		return startAs[uint32](ctx, k, a)
	case dtype.Int64:
		return startAs[int64](ctx, k, a)
	case dtype.Uint64:
		return startAs[uint64](ctx, k, a)
	case dtype.Float8E4M3Type:
		return startAs[dtype.Float8E4M3](ctx, k, a)
	case dtype.Float8E5M2Type:
		return startAs[dtype.Float8E5M2](ctx, k, a)
	}
	panic(fmt.Sprintf("bench: no element type for %v", a.dt))
}

func startAs[T dtype.Element](ctx context.Context, k collKind, a opArgs) *collective.Handle {
	c, send, recv := a.comm, view[T](a.send), view[T](a.recv)
	switch k {
	case collAllReduce:
		return collective.AllReduceAsync(ctx, c, send, recv, a.op)
	case collBroadcast:
		return collective.BroadcastAsync(ctx, c, send, recv, a.root)
	case collReduce:
		return collective.ReduceAsync(ctx, c, send, recv, a.op, a.root)
	case collAllGather:
		return collective.AllGatherAsync(ctx, c, send, recv)
	case collReduceScatter:
		return collective.ReduceScatterAsync(ctx, c, send, recv, a.op)
	case collAllToAll:
		return collective.AllToAllAsync(ctx, c, send, recv)
	}
	panic(fmt.Sprintf("bench: no asynchronous call for collective %d", k))
}

// view is b seen as elements of T (b's length a multiple of T's size,
// its start aligned: buffers are page-aligned, and split at multiples of
// the element size).
func view[T dtype.Element](b []byte) []T {
	var z T
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(z)))
}
