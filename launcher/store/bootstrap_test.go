package store

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// eachRank runs fn for ranks 0..size-1 as goroutines, each with its own
// handle on f's store, and returns their errors by rank.
func eachRank(f fixture, size int, fn func(s Store, rank int) error) []error {
	handles := make([]Store, size)
	for r := range handles {
		handles[r] = f.handle()
	}
	errs := make([]error, size)
	var wg sync.WaitGroup
	for r := range size {
		wg.Go(func() { errs[r] = fn(handles[r], r) })
	}
	wg.Wait()
	return errs
}

func requireNoErrors(t *testing.T, errs []error) {
	t.Helper()
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
}

func TestBootstrap16Ranks(t *testing.T) {
	const size, rounds = 16, 3
	eachBackend(t, Limits{}, func(t *testing.T, f fixture) {
		ctx := testCtx(t, long)
		gathered := make([][][]byte, size)
		got := make([][]byte, size)
		errs := eachRank(f, size, func(s Store, rank int) error {
			for round := range rounds {
				for _, name := range []string{"addrs", "other"} {
					val := fmt.Appendf(nil, "%s-%d-rank%d", name, round, rank)
					all, err := AllGather(ctx, s, rank, size, name, val)
					if err != nil {
						return err
					}
					for r, v := range all {
						if want := fmt.Sprintf("%s-%d-rank%d", name, round, r); string(v) != want {
							return fmt.Errorf("round %d: value of rank %d is %q, want %q", round, r, v, want)
						}
					}
					gathered[rank] = all
				}
				if err := Barrier(ctx, s, rank, size, "sync"); err != nil {
					return err
				}
				root := (round * 5) % size
				v, err := Broadcast(ctx, s, rank, size, root, "bcast", fmt.Appendf(nil, "from %d in %d", rank, round))
				if err != nil {
					return err
				}
				if want := fmt.Sprintf("from %d in %d", root, round); string(v) != want {
					return fmt.Errorf("round %d: broadcast gave %q, want %q", round, v, want)
				}
				got[rank] = v
			}
			return nil
		})
		requireNoErrors(t, errs)
		require.Len(t, gathered[size-1], size)
		// Per name, size generation counters, plus the last generation's
		// keys for allgather and barrier; broadcast deletes all of its own.
		require.Equal(t, 3*2*size+size, f.keys(), "old generations are deleted")
	})
}

func TestBootstrapSizeOne(t *testing.T) {
	s, ctx := NewMemStore(Limits{}), testCtx(t, long)
	all, err := AllGather(ctx, s, 0, 1, "solo", nil)
	require.NoError(t, err)
	require.Equal(t, [][]byte{{}}, all)
	require.NoError(t, Barrier(ctx, s, 0, 1, "solo"))
	v, err := Broadcast(ctx, s, 0, 1, 0, "solo", []byte("x"))
	require.NoError(t, err)
	require.Equal(t, []byte("x"), v)
}

// expireWhenPending expires ctx once f's store has n blocked waits, so
// that the ranks present are all waiting when their deadline passes.
func expireWhenPending(f fixture, n int, ctx *expiringCtx) {
	go func() {
		waitFor(func() bool { return f.pending() == n })
		ctx.expire()
	}()
}

func TestBootstrapMissingRank(t *testing.T) {
	const size, absent = 5, 3
	eachBackend(t, Limits{}, func(t *testing.T, f fixture) {
		check := func(t *testing.T, errs []error, op string, want []int) {
			for r, err := range errs {
				if slices.Contains(want, r) {
					continue
				}
				var mr *MissingRanksError
				require.ErrorAs(t, err, &mr, "rank %d", r)
				require.Equal(t, op, mr.Op)
				require.Equal(t, want, mr.Ranks, "rank %d", r)
				require.ErrorIs(t, err, context.DeadlineExceeded)
				require.Contains(t, err.Error(), fmt.Sprintf("ranks %v missing", want))
			}
		}
		ctx := newExpiringCtx(t)
		expireWhenPending(f, size-1, ctx)
		errs := eachRank(f, size, func(s Store, rank int) error {
			if rank == absent {
				return nil
			}
			_, err := AllGather(ctx, s, rank, size, "ag", []byte("v"))
			return err
		})
		check(t, errs, "allgather", []int{absent})

		ctx = newExpiringCtx(t)
		expireWhenPending(f, size-2, ctx)
		errs = eachRank(f, size, func(s Store, rank int) error {
			if rank == absent || rank == 1 {
				return nil
			}
			return Barrier(ctx, s, rank, size, "b")
		})
		check(t, errs, "barrier", []int{1, absent})

		ctx = newExpiringCtx(t)
		expireWhenPending(f, size-1, ctx)
		errs = eachRank(f, size, func(s Store, rank int) error {
			if rank == absent {
				return nil
			}
			_, err := Broadcast(ctx, s, rank, size, absent, "bc", nil)
			return err
		})
		check(t, errs, "broadcast", []int{absent}) // absent is the root

		ctx = newExpiringCtx(t)
		expireWhenPending(f, 1, ctx)
		_, err := Broadcast(ctx, f.handle(), 0, size, 0, "bc-root", []byte("v"))
		var mr *MissingRanksError
		require.ErrorAs(t, err, &mr)
		require.Equal(t, []int{1, 2, 3, 4}, mr.Ranks, "root names every rank that did not receive")
	})
}

func TestBootstrapInvalid(t *testing.T) {
	s, ctx := NewMemStore(Limits{}), t.Context()
	_, err := AllGather(ctx, s, 2, 2, "x", nil)
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorIs(t, Barrier(ctx, s, 0, 0, "x"), ErrInvalid)
	require.ErrorIs(t, Barrier(ctx, s, 0, 1, ""), ErrInvalid)
	_, err = Broadcast(ctx, s, 0, 2, 2, "x", nil)
	require.ErrorIs(t, err, ErrInvalid)
	_, err = Broadcast(ctx, s, -1, 2, 0, "x", nil)
	require.ErrorIs(t, err, ErrInvalid)
}

func TestBootstrapNamesDoNotCollide(t *testing.T) {
	// "a/g1" and "a" must not share keys, whatever the names contain.
	g1, g2 := group{op: "allgather", name: "a"}, group{op: "allgather", name: "a/g1/r0:"}
	require.NotEqual(t, g1.base(), g2.base()[:len(g1.base())])
	require.Equal(t, "boot/allgather/1:a/g7/r3", g1.key(7, rankPart("r", 3)))
}
