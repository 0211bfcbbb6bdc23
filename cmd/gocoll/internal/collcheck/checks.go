package main

import (
	"context"
	"fmt"

	"github.com/gocoll/gocoll"
	"github.com/gocoll/gocoll/collective"
)

// Values are small integers, so that float sums are exact in any order.
// countSmall goes through recursive doubling and binomial trees,
// countLarge (above the 64 KiB default) through rings and chains.
const (
	countSmall = 7
	countLarge = 70000
)

func value(rank, i int) int64 { return int64(rank*1000 + i%1000) }

func checkAllReduce(ctx context.Context, c *collective.Comm) error {
	n, r := c.Size(), c.Rank()
	for _, count := range []int{countSmall, countLarge} {
		x := make([]float32, count)
		y := make([]int64, count)
		want := make([]float32, count)
		wantMax := make([]int64, count)
		for i := range x {
			x[i], y[i] = float32(value(r, i)), value(r, i)
			for q := range n {
				want[i] += float32(value(q, i))
			}
			wantMax[i] = value(n-1, i)
		}
		if err := collective.AllReduce(ctx, c, x, x, collective.Sum); err != nil {
			return err
		}
		if err := mismatch(fmt.Sprintf("sum of %d float32", count), x, want); err != nil {
			return err
		}
		if err := collective.AllReduce(ctx, c, y, y, collective.Max); err != nil {
			return err
		}
		if err := mismatch(fmt.Sprintf("max of %d int64", count), y, wantMax); err != nil {
			return err
		}
	}
	return nil
}

func checkBroadcast(ctx context.Context, c *collective.Comm) error {
	root := c.Size() - 1
	for _, count := range []int{countSmall, countLarge} {
		x := make([]int32, count)
		want := make([]int32, count)
		for i := range x {
			want[i] = int32(value(root, i))
			if c.Rank() == root {
				x[i] = want[i]
			}
		}
		if err := collective.Broadcast(ctx, c, x, x, root); err != nil {
			return err
		}
		if err := mismatch("broadcast", x, want); err != nil {
			return err
		}
	}
	return nil
}

func checkReduce(ctx context.Context, c *collective.Comm) error {
	n := c.Size()
	x := make([]int64, countLarge)
	out := make([]int64, countLarge)
	want := make([]int64, countLarge)
	for i := range x {
		x[i] = value(c.Rank(), i)
		for q := range n {
			want[i] += value(q, i)
		}
	}
	if err := collective.Reduce(ctx, c, x, out, collective.Sum, 0); err != nil {
		return err
	}
	if c.Rank() == 0 {
		return mismatch("reduce at root", out, want)
	}
	return nil
}

func checkAllGather(ctx context.Context, c *collective.Comm) error {
	n := c.Size()
	x := make([]int64, countSmall)
	for i := range x {
		x[i] = value(c.Rank(), i)
	}
	out := make([]int64, n*countSmall)
	if err := collective.AllGather(ctx, c, x, out); err != nil {
		return err
	}
	want := make([]int64, 0, n*countSmall)
	for q := range n {
		for i := range countSmall {
			want = append(want, value(q, i))
		}
	}
	return mismatch("allgather", out, want)
}

func checkReduceScatter(ctx context.Context, c *collective.Comm) error {
	n, block := c.Size(), countSmall
	x := make([]int64, n*block)
	for i := range x {
		x[i] = value(c.Rank(), i)
	}
	out := make([]int64, block)
	if err := collective.ReduceScatter(ctx, c, x, out, collective.Sum); err != nil {
		return err
	}
	want := make([]int64, block)
	for i := range want {
		for q := range n {
			want[i] += value(q, c.Rank()*block+i)
		}
	}
	return mismatch("reducescatter", out, want)
}

func checkAllToAll(ctx context.Context, c *collective.Comm) error {
	n, r := c.Size(), c.Rank()
	x := make([]int64, n*2)
	for j := range n {
		x[2*j], x[2*j+1] = int64(r*100+j), -int64(r*100+j)
	}
	out := make([]int64, n*2)
	if err := collective.AllToAll(ctx, c, x, out); err != nil {
		return err
	}
	want := make([]int64, n*2)
	for q := range n {
		want[2*q], want[2*q+1] = int64(q*100+r), -int64(q*100+r)
	}
	return mismatch("alltoall", out, want)
}

// checkAllToAllV: rank r sends j+1 copies of r*100+j to rank j.
func checkAllToAllV(ctx context.Context, c *collective.Comm) error {
	n, r := c.Size(), c.Rank()
	sendCounts, sendDispls := make([]int, n), make([]int, n)
	recvCounts, recvDispls := make([]int, n), make([]int, n)
	var send []int32
	for j := range n {
		sendCounts[j], sendDispls[j] = j+1, len(send)
		for range j + 1 {
			send = append(send, int32(r*100+j))
		}
	}
	var want []int32
	for q := range n {
		recvCounts[q], recvDispls[q] = r+1, len(want)
		for range r + 1 {
			want = append(want, int32(q*100+r))
		}
	}
	recv := make([]int32, len(want))
	if err := collective.AllToAllV(ctx, c, send, sendCounts, sendDispls, recv, recvCounts, recvDispls); err != nil {
		return err
	}
	return mismatch("alltoallv", recv, want)
}

func checkGather(ctx context.Context, c *collective.Comm) error {
	n := c.Size()
	x := []uint8{uint8(c.Rank()), uint8(c.Rank() + 1)}
	out := make([]uint8, 2*n)
	if err := collective.Gather(ctx, c, x, out, 0); err != nil {
		return err
	}
	if c.Rank() != 0 {
		return nil
	}
	want := make([]uint8, 0, 2*n)
	for q := range n {
		want = append(want, uint8(q), uint8(q+1))
	}
	return mismatch("gather", out, want)
}

func checkScatter(ctx context.Context, c *collective.Comm) error {
	n := c.Size()
	var x []float64
	if c.Rank() == 0 {
		for q := range n {
			x = append(x, float64(q), float64(q)/2)
		}
	} else {
		x = make([]float64, 2*n)
	}
	out := make([]float64, 2)
	if err := collective.Scatter(ctx, c, x, out, 0); err != nil {
		return err
	}
	return mismatch("scatter", out, []float64{float64(c.Rank()), float64(c.Rank()) / 2})
}

// checkSendRecv passes a token around the ring of ranks.
func checkSendRecv(ctx context.Context, c *collective.Comm) error {
	n, r := c.Size(), c.Rank()
	if n == 1 {
		return nil
	}
	next, prev := (r+1)%n, (r+n-1)%n
	send := collective.SendAsync(ctx, c, []int64{int64(r)}, next)
	got := []int64{-1}
	if err := collective.Recv(ctx, c, got, prev); err != nil {
		return err
	}
	if err := send.Wait(ctx); err != nil {
		return err
	}
	return mismatch("token from the previous rank", got, []int64{int64(prev)})
}

// checkSiteSplit makes one communicator per site and sums the ranks in it.
func checkSiteSplit(ctx context.Context, w *gocoll.World) error {
	topo := w.Topology()
	sites := topo.Sites()
	color := -1
	for i, s := range sites {
		if s == w.Site() {
			color = i
		}
	}
	sub, err := w.Split(ctx, color, w.Rank())
	if err != nil {
		return err
	}
	defer sub.Close()
	x := []int64{int64(w.Rank())}
	if err := collective.AllReduce(ctx, sub, x, x, collective.Sum); err != nil {
		return err
	}
	var want int64
	for _, r := range topo.RanksOnSite(w.Site()) {
		want += int64(r)
	}
	return mismatch("sum over the site", x, []int64{want})
}
