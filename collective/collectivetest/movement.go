package collectivetest

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/dtype"
)

// pattern is rank r's distinct bytes for data-moving collectives: no
// arithmetic happens, so any bit pattern will do, and a misplaced block
// shows up.
func pattern(r, salt, nbytes int) []byte {
	b := make([]byte, nbytes)
	x := uint32(r*7919+salt*104729) | 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// checkMovement runs the collectives that only move data: Broadcast under
// every algorithm set (in and out of place), AllGather (in and out of place),
// AllToAll, AllToAllV, Gather, Scatter and a ring of Send/Recv.
func checkMovement(t *testing.T, w *world, count int, dt dtype.DataType) {
	n, es := len(w.comms), dt.Size()
	name := fmt.Sprintf("count=%d/%v", count, dt)
	root := (count + 1) % n
	for si, set := range w.sets {
		if as := algoSets[si]; !as.runs(dt) || as.allReduceOnly {
			continue
		}
		w.runSet(t, set, name+"/Broadcast/"+algoSets[si].name, func(ctx context.Context, r int, c *collective.Comm) error {
			want := pattern(root, count, count*es)
			var send []byte
			if r == root {
				send = pattern(root, count, count*es)
			}
			out := make([]byte, count*es)
			if err := c.BroadcastBytes(ctx, send, out, dt, root); err != nil {
				return err
			}
			in := pattern(r, count, count*es) // in place: root's buffer is the source
			if err := c.BroadcastBytes(ctx, in, in, dt, root); err != nil {
				return err
			}
			return firstErr(compare("out of place", dt, out, want), compare("in place", dt, in, want))
		})
	}
	blk := blockCount(count, n) * es
	checkAllGather(t, w, w.comms, name+"/AllGather", dt, blk)
	for si, set := range w.sets {
		if as := algoSets[si]; as.runs(dt) && as.allGather != collective.AlgoAuto {
			checkAllGather(t, w, set, name+"/AllGather/"+as.name, dt, blk)
		}
	}
	w.runSet(t, w.comms, name+"/AllToAll", func(ctx context.Context, r int, c *collective.Comm) error {
		send, want := make([]byte, 0, n*blk), make([]byte, 0, n*blk)
		for p := 0; p < n; p++ {
			send = append(send, pattern(r*n+p, 2, blk)...)
			want = append(want, pattern(p*n+r, 2, blk)...)
		}
		out := make([]byte, n*blk)
		if err := c.AllToAllBytes(ctx, send, out, dt); err != nil {
			return err
		}
		return compare("", dt, out, want)
	})
	checkAllToAllV(t, w, name, count, dt)
	checkRooted(t, w, name, count, dt, root)
}

// vcount is how many elements rank from sends to rank to in AllToAllV.
func vcount(from, to, count int) int { return (from*3 + to*5 + count) % (blockCount(count, 4) + 2) }

// checkAllToAllV runs the typed API on bytes (counts in elements of dt's
// size), with a gap before each send block and uneven counts per pair.
func checkAllToAllV(t *testing.T, w *world, name string, count int, dt dtype.DataType) {
	n, es := len(w.comms), 1
	w.runSet(t, w.comms, name+"/AllToAllV", func(ctx context.Context, r int, c *collective.Comm) error {
		sc, sd, rc, rd := make([]int, n), make([]int, n), make([]int, n), make([]int, n)
		var send, want []byte
		for p := 0; p < n; p++ {
			sc[p], rc[p] = vcount(r, p, count), vcount(p, r, count)
			sd[p], rd[p] = len(send)/es+1, len(want)/es // a gap before each send block
			send = append(append(send, make([]byte, es)...), pattern(r*n+p, 3, sc[p]*es)...)
			want = append(want, pattern(p*n+r, 3, rc[p]*es)...)
		}
		out := make([]byte, len(want))
		if err := collective.AllToAllV(ctx, c, send, sc, sd, out, rc, rd); err != nil {
			return err
		}
		return compare("", dtype.Uint8, out, want)
	})
}

func checkRooted(t *testing.T, w *world, name string, count int, dt dtype.DataType, root int) {
	n, es := len(w.comms), dt.Size()
	blk := blockCount(count, n) * es
	w.runSet(t, w.comms, name+"/Gather", func(ctx context.Context, r int, c *collective.Comm) error {
		var out []byte
		if r == root {
			out = make([]byte, n*blk)
		}
		if err := c.GatherBytes(ctx, pattern(r, 4, blk), out, dt, root); err != nil {
			return err
		}
		for p := 0; r == root && p < n; p++ {
			if !bytes.Equal(out[p*blk:(p+1)*blk], pattern(p, 4, blk)) {
				return fmt.Errorf("block of rank %d is wrong", p)
			}
		}
		return nil
	})
	w.runSet(t, w.comms, name+"/Scatter", func(ctx context.Context, r int, c *collective.Comm) error {
		var send []byte
		for p := 0; r == root && p < n; p++ {
			send = append(send, pattern(p, 5, blk)...)
		}
		out := make([]byte, blk)
		if err := c.ScatterBytes(ctx, send, out, dt, root); err != nil {
			return err
		}
		return compare("", dt, out, pattern(r, 5, blk))
	})
	w.runSet(t, w.comms, name+"/SendRecv", func(ctx context.Context, r int, c *collective.Comm) error {
		to, from := (r+1)%n, (r+n-1)%n
		out := make([]byte, blk)
		rh := collective.RecvAsync(ctx, c, out, from)
		if err := collective.Send(ctx, c, pattern(r, 6, blk), to); err != nil {
			return err
		}
		if err := rh.Wait(ctx); err != nil {
			return err
		}
		return compare("", dt, out, pattern(from, 6, blk))
	})
}

// checkBarrierAndSplit runs a Barrier, then splits the world by parity and
// runs an AllReduce in each half, checking sizes, ranks and the result.
func checkBarrierAndSplit(t *testing.T, w *world) {
	n := len(w.comms)
	w.runSet(t, w.comms, "Barrier", func(ctx context.Context, r int, c *collective.Comm) error {
		return c.Barrier(ctx)
	})
	w.runSet(t, w.comms, "Split", func(ctx context.Context, r int, c *collective.Comm) error {
		color := r % 2
		if r == n-1 && n > 2 {
			color = collective.NoColor
		}
		sub, err := c.Split(ctx, color, -r) // reversed order within each half
		if err != nil {
			return err
		}
		if color == collective.NoColor {
			if sub != nil {
				return fmt.Errorf("NoColor got a communicator")
			}
			return nil
		}
		var members []int
		for p := n - 1; p >= 0; p-- {
			if p%2 == color && !(p == n-1 && n > 2) {
				members = append(members, p)
			}
		}
		if sub.Size() != len(members) || members[sub.Rank()] != r {
			return fmt.Errorf("split: size %d rank %d, want members %v", sub.Size(), sub.Rank(), members)
		}
		x := []int64{int64(r)}
		if err := collective.AllReduce(ctx, sub, x, x, collective.Sum); err != nil {
			return err
		}
		var want int64
		for _, m := range members {
			want += int64(m)
		}
		if x[0] != want {
			return fmt.Errorf("AllReduce in the split: %d, want %d", x[0], want)
		}
		return sub.Close()
	})
}

// checkAllGather runs AllGather of blk-byte blocks of dt on set, in and
// out of place.
func checkAllGather(t *testing.T, w *world, set []*collective.Comm, name string, dt dtype.DataType, blk int) {
	n := len(set)
	w.runSet(t, set, name, func(ctx context.Context, r int, c *collective.Comm) error {
		want := make([]byte, 0, n*blk)
		for p := 0; p < n; p++ {
			want = append(want, pattern(p, 1, blk)...)
		}
		out := make([]byte, n*blk)
		if err := c.AllGatherBytes(ctx, pattern(r, 1, blk), out, dt); err != nil {
			return err
		}
		in := make([]byte, n*blk)
		copy(in[r*blk:], pattern(r, 1, blk))
		if err := c.AllGatherBytes(ctx, in[r*blk:(r+1)*blk], in, dt); err != nil {
			return err
		}
		return firstErr(compare("out of place", dt, out, want), compare("in place", dt, in, want))
	})
}
