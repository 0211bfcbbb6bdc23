//go:build linux

package shm_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport/shm"
)

// leanComms is 4 ranks on the board, a 16-deep ring, in steady state for
// a 1-element Broadcast from root 0 (the set-up call and 3 more).
func leanComms(t *testing.T) []*collective.Comm {
	t.Helper()
	comms := boardComms(t, 4, shm.Config{}, collective.Config{Timeout: time.Minute, BoardRing: 16})
	for range 4 {
		if _, errs := broadcastAll(comms, same(4, 1), 0, 20*time.Second); errors.Join(errs...) != nil {
			t.Fatal(errs)
		}
	}
	return comms
}

// leanPhase runs k 1-element Broadcasts from root 0 on each rank in turn,
// the root first: rank r's count at call bad is 2 (bad < 0: never). Each
// receiver finds the root's calls there, so nothing waits; it returns
// each rank's values and errors.
func leanPhase(comms []*collective.Comm, k, badRank, bad int) ([][]int64, [][]error) {
	vals, errs := make([][]int64, len(comms)), make([][]error, len(comms))
	for r, c := range comms {
		for i := range k {
			n := 1
			if r == badRank && i == bad {
				n = 2
			}
			buf := make([]int64, n)
			if r == 0 {
				buf[0] = int64(1000 + i)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			errs[r] = append(errs[r], collective.Broadcast(ctx, c, buf, buf, 0))
			cancel()
			vals[r] = append(vals[r], buf[0])
		}
	}
	return vals, errs
}

// TestBoardLeanBroadcast: in steady state, with the root's calls there
// when each receiver comes, every call on every rank runs the lean way
// (no operation: boardlean.go), with every receiver's data right; the
// checks it leaves are taken by the calls after, which find nothing
// wrong, and the flight record names the latest lean call, before and
// after Close.
func TestBoardLeanBroadcast(t *testing.T) {
	comms := leanComms(t)
	const k = 8 // half the ring: no slot reused within the phase
	before := make([]uint64, 4)
	for r, c := range comms {
		before[r] = c.BoardLeanCalls()
	}
	vals, errs := leanPhase(comms, k, -1, -1)
	for r, c := range comms {
		if got := c.BoardLeanCalls() - before[r]; got != k {
			t.Errorf("rank %d: %d lean calls of %d", r, got, k)
		}
		for i := range k {
			if errs[r][i] != nil || vals[r][i] != int64(1000+i) {
				t.Fatalf("rank %d call %d: %d, %v", r, i, vals[r][i], errs[r][i])
			}
		}
	}
	for range 20 { // every slot reused, the checks left taken
		if _, errs := broadcastAll(comms, same(4, 1), 0, 20*time.Second); errors.Join(errs...) != nil {
			t.Fatal(errs)
		}
	}
	leanPhase(comms, k, -1, -1) // again, the record's last calls lean ones
	want := uint64(4 + k + 20 + k - 1)
	for r, c := range comms {
		rec := c.FlightRecord()
		last := rec[len(rec)-1]
		if last.Kind != collective.KindBroadcast || last.Seq != want || last.State != collective.OpDone || last.Bytes != 8 {
			t.Fatalf("rank %d: the flight record ends with %v, want the Broadcast #%d", r, last, want)
		}
	}
	for r, c := range comms { // the checks the last calls left: taken at Close
		if err := c.Close(); err != nil {
			t.Fatalf("rank %d: Close: %v", r, err)
		}
		if rec := c.FlightRecord(); rec[len(rec)-1].Seq != want {
			t.Fatalf("rank %d: after Close the flight record ends with %v, want #%d", r, rec[len(rec)-1], want)
		}
	}
}

// TestBoardLeanMismatch: the last receiver's count differs at call 3 of
// a phase whose every other call ran the lean way: that rank fails it at
// once, and every other rank fails a call within the ring's depth after
// it (the lean calls find the failure or the unmatched check and leave
// the call to the generic path, which fails it), as the package doc
// says.
func TestBoardLeanMismatch(t *testing.T) {
	comms := leanComms(t)
	const k, bad = 8, 3
	_, errs := leanPhase(comms, k, 3, bad)
	if errs[3][bad] == nil || !strings.Contains(errs[3][bad].Error(), "mismatch") {
		t.Fatalf("the mismatched call: %v", errs[3][bad])
	}
	for range 16 + 1 {
		_, e := broadcastAll(comms, same(4, 1), 0, 20*time.Second)
		for r := range comms {
			errs[r] = append(errs[r], e[r])
		}
	}
	for r := range comms {
		if errors.Join(errs[r][:bad]...) != nil {
			t.Fatalf("rank %d failed before the mismatch: %v", r, errs[r][:bad])
		}
		if errors.Join(errs[r][bad:bad+16+1]...) == nil {
			t.Errorf("rank %d: no call of %d to %d failed", r, bad, bad+16)
		}
	}
}

// TestBoardLeanAbortAndHooks: an OnOpEnd function sees every call (the
// lean path is off while one is set); Async calls never run the lean
// way; after Abort a Broadcast fails with ErrAborted at once on that rank
// and, within the ring's depth, on the others.
func TestBoardLeanAbortAndHooks(t *testing.T) {
	comms := leanComms(t)
	var seen atomic.Int64
	comms[0].OnOpEnd(func(collective.OpRecord) { seen.Add(1) })
	lean0 := comms[0].BoardLeanCalls()
	if _, errs := broadcastAll(comms, same(4, 1), 0, 20*time.Second); errors.Join(errs...) != nil {
		t.Fatal(errs)
	}
	if seen.Load() != 1 || comms[0].BoardLeanCalls() != lean0 {
		t.Fatalf("OnOpEnd saw %d calls, %d lean ones", seen.Load(), comms[0].BoardLeanCalls()-lean0)
	}
	comms[0].OnOpEnd(nil)
	_, errs := onEveryRank(comms, same(4, 1), 20*time.Second, func(ctx context.Context, r int, c *collective.Comm, out []int64) error {
		return collective.BroadcastAsync(ctx, c, out, out, 0).Wait(ctx)
	})
	if errors.Join(errs...) != nil || comms[0].BoardLeanCalls() != lean0 {
		t.Fatalf("Async: %v, %d lean calls", errs, comms[0].BoardLeanCalls()-lean0)
	}
	_ = comms[2].Abort()
	buf := []int64{0}
	if err := collective.Broadcast(context.Background(), comms[2], buf, buf, 0); !errors.Is(err, collective.ErrAborted) {
		t.Fatalf("after Abort: %v", err)
	}
	_, errs = onEveryRank(comms[:2], same(2, 1), 30*time.Second, func(ctx context.Context, r int, c *collective.Comm, out []int64) error {
		for range 16 + 2 {
			if err := collective.Broadcast(ctx, c, out, out, 0); err != nil {
				return err
			}
		}
		return nil
	})
	for r, err := range errs {
		if !errors.Is(err, collective.ErrAborted) {
			t.Errorf("rank %d: %v, want ErrAborted", r, err)
		}
	}
}

// TestBoardLeanSplit: communicators made by Split share their parent's
// flight recorder and endpoint; lean Broadcasts on the parent and on the
// halves at once (each rank's goroutines on both) give right data, and
// each rank's flight record names the latest call of each communicator.
func TestBoardLeanSplit(t *testing.T) {
	comms := leanComms(t)
	subs := make([]*collective.Comm, 4)
	_, errs := onEveryRank(comms, same(4, 0), 20*time.Second, func(ctx context.Context, r int, c *collective.Comm, _ []int64) error {
		s, err := c.Split(ctx, r%2, r)
		subs[r] = s
		return err
	})
	if errors.Join(errs...) != nil {
		t.Fatal(errs)
	}
	t.Cleanup(func() {
		for _, s := range subs {
			_ = s.Close()
		}
	})
	const calls = 200
	done := make(chan error, 8)
	loop := func(c *collective.Comm, root int) {
		var err error
		for i := 0; i < calls && err == nil; i++ {
			buf := []int64{0}
			if c.Rank() == root {
				buf[0] = int64(i)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			err = collective.Broadcast(ctx, c, buf, buf, root)
			cancel()
			if err == nil && buf[0] != int64(i) {
				err = errors.New("wrong data")
			}
		}
		done <- err
	}
	for r := range 4 {
		go loop(comms[r], 0)
		go loop(subs[r], 1)
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	for r := range 4 {
		last := map[uint64]uint64{}
		for _, rec := range comms[r].FlightRecord() {
			last[rec.Comm] = max(last[rec.Comm], rec.Seq)
		}
		if last[comms[r].ID()] != 5+calls-1 || last[subs[r].ID()] != calls-1 { // the parent's Split was #4
			t.Errorf("rank %d: the flight record's latest calls %v, want #%d of %#x and #%d of %#x", r, last,
				5+calls-1, comms[r].ID(), calls-1, subs[r].ID())
		}
		t.Logf("rank %d: lean calls %d of the parent's, %d of its half's", r, comms[r].BoardLeanCalls(), subs[r].BoardLeanCalls())
	}
}

// TestBoardLeanRecordAfterSplitCalls (review A16, L1): a communicator W
// runs a lean Broadcast, a communicator Split from it (same flight
// recorder) runs 130 calls, then W runs one more lean Broadcast, the
// latest call of the process. The flight record ends with it: a lean
// record's stamp is read again once another record started since the
// last read, so it never sorts before records that came before its call,
// and the cut to the FlightRecords most recent keeps it.
func TestBoardLeanRecordAfterSplitCalls(t *testing.T) {
	comms := boardComms(t, 2, shm.Config{}, collective.Config{Timeout: time.Minute, BoardRing: 16})
	for range 4 {
		if _, errs := broadcastAll(comms, same(2, 1), 0, 20*time.Second); errors.Join(errs...) != nil {
			t.Fatal(errs)
		}
	}
	subs := make([]*collective.Comm, 2)
	_, errs := onEveryRank(comms, same(2, 0), 20*time.Second, func(ctx context.Context, r int, c *collective.Comm, _ []int64) error {
		s, err := c.Split(ctx, 0, r)
		subs[r] = s
		return err
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	// A non-lean call, then the 3 generic calls of a new steady state:
	// the next lean call is the first of a run (it reads the clock).
	if _, errs := allReduceAll(comms, same(2, 1), 20*time.Second); errors.Join(errs...) != nil {
		t.Fatal(errs)
	}
	for range 3 {
		if _, errs := broadcastAll(comms, same(2, 1), 0, 20*time.Second); errors.Join(errs...) != nil {
			t.Fatal(errs)
		}
	}
	lean0 := comms[0].BoardLeanCalls()
	leanOnce(t, comms, 11) // the run's first: stamped
	for range 130 {
		if _, errs := allReduceAll(subs, same(2, 1), 20*time.Second); errors.Join(errs...) != nil {
			t.Fatal(errs)
		}
	}
	leanOnce(t, comms, 12) // the latest call of the process
	if got := comms[0].BoardLeanCalls() - lean0; got != 2 {
		t.Fatalf("rank 0: %d lean calls of 2", got)
	}
	rec := comms[0].FlightRecord()
	last := rec[len(rec)-1]
	t.Logf("rank 0: %d records; last %v", len(rec), last)
	if last.Comm != 7 || last.Kind != collective.KindBroadcast { // the world's (boardComms: New's id 7)
		t.Fatalf("rank 0's latest call was the world's lean Broadcast (after the Split's 130 calls), but the record ends with %v", last)
	}
	for _, s := range subs {
		_ = s.Close()
	}
}
