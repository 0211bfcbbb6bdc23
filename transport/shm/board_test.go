//go:build linux

package shm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/shm"
)

// boardComms builds n shm ranks in this process and a communicator over
// them with cfg.
func boardComms(t *testing.T, n int, scfg shm.Config, cfg collective.Config) []*collective.Comm {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	eps, err := shm.NewLocalWorld(ctx, n, scfg)
	if err != nil {
		t.Fatal(err)
	}
	comms := make([]*collective.Comm, n)
	for i, ep := range eps {
		c, err := collective.New(transport.Endpoint(ep), 7, cfg)
		if err != nil {
			t.Fatal(err)
		}
		comms[i] = c
		t.Cleanup(func() { _ = c.Close(); _ = ep.Close() })
	}
	return comms
}

// allReduceAll runs an int64 sum AllReduce of counts[r] elements (rank
// r's values r+1) on every rank and returns the results and errors.
func allReduceAll(comms []*collective.Comm, counts []int, timeout time.Duration) ([][]int64, []error) {
	n := len(comms)
	outs, errs := make([][]int64, n), make([]error, n)
	done := make(chan int, n)
	for r, c := range comms {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			in := make([]int64, counts[r])
			for i := range in {
				in[i] = int64(r + 1 + i)
			}
			outs[r] = make([]int64, counts[r])
			errs[r] = collective.AllReduce(ctx, c, in, outs[r], collective.Sum)
			done <- r
		}()
	}
	for range n {
		<-done
	}
	return outs, errs
}

func same(n, count int) []int {
	c := make([]int, n)
	for i := range c {
		c[i] = count
	}
	return c
}

// TestBoardAllReduce: small AllReduces run on the board after the first
// (its set-up), with every rank's result right, at world sizes 2 to 6.
func TestBoardAllReduce(t *testing.T) {
	for _, n := range []int{2, 3, 4, 6} {
		comms := boardComms(t, n, shm.Config{}, collective.Config{})
		for _, count := range []int{1, 0, 7, 1000} {
			outs, errs := allReduceAll(comms, same(n, count), 20*time.Second)
			for r := range n {
				if errs[r] != nil {
					t.Fatalf("n=%d count=%d rank %d: %v", n, count, r, errs[r])
				}
				for i, v := range outs[r] {
					if want := int64(n*(n+1)/2 + n*i); v != want {
						t.Fatalf("n=%d count=%d rank %d: [%d] = %d, want %d", n, count, r, i, v, want)
					}
				}
			}
		}
		for r, c := range comms {
			if got := c.BoardCalls(); got != 3 {
				t.Fatalf("n=%d rank %d: %d calls on the board, want 3 (all but the set-up call)", n, r, got)
			}
		}
	}
}

// requireAllFail checks that every rank's call failed and that one error
// contains want.
func requireAllFail(t *testing.T, errs []error, want string) {
	t.Helper()
	found := false
	for r, err := range errs {
		if err == nil {
			t.Fatalf("rank %d: no error", r)
		}
		found = found || strings.Contains(err.Error(), want)
		t.Logf("rank %d: %v", r, err)
	}
	if !found {
		t.Fatalf("no error says %q", want)
	}
}

// TestBoardMismatchOnBoard: ranks whose calls differ but all fit the
// board fail in that call, every one of them, and the communicator then
// works again.
func TestBoardMismatchOnBoard(t *testing.T) {
	comms := boardComms(t, 4, shm.Config{}, collective.Config{})
	allReduceAll(comms, same(4, 2), 20*time.Second) // the set-up call
	_, errs := allReduceAll(comms, []int{2, 2, 2, 3}, 20*time.Second)
	requireAllFail(t, errs, "count 2 vs 3")
	outs, errs := allReduceAll(comms, same(4, 2), 20*time.Second)
	for r := range comms {
		if errs[r] != nil || outs[r][0] != 10 {
			t.Fatalf("after the mismatch, rank %d: %v %v", r, outs[r], errs[r])
		}
	}
	if got := comms[0].BoardCalls(); got != 2 {
		t.Fatalf("%d calls on the board, want 2", got)
	}
}

// TestBoardMismatchWithPointToPoint: a rank whose call is too large for
// the board takes the point-to-point path while the others wait on the
// board: every rank fails, promptly (the board ranks hear its header),
// not at the deadline.
func TestBoardMismatchWithPointToPoint(t *testing.T) {
	for _, odd := range []int{0, 3} {
		comms := boardComms(t, 4, shm.Config{}, collective.Config{Timeout: time.Minute})
		allReduceAll(comms, same(4, 2), 20*time.Second)
		counts := same(4, 2)
		counts[odd] = 100000
		start := time.Now()
		_, errs := allReduceAll(comms, counts, time.Minute)
		requireAllFail(t, errs, "count")
		if el := time.Since(start); el > 20*time.Second {
			t.Fatalf("rank %d on the point-to-point path: the ranks failed after %v", odd, el)
		}
	}
}

// TestBoardTimeout: a rank that never calls leaves the others to the
// deadline of their context, whose error names it.
func TestBoardTimeout(t *testing.T) {
	comms := boardComms(t, 4, shm.Config{}, collective.Config{})
	allReduceAll(comms, same(4, 2), 20*time.Second)
	_, errs := allReduceAll(comms[:3], same(3, 2), 300*time.Millisecond)
	for r, err := range errs {
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "rank 3") {
			t.Fatalf("rank %d: %v, want a deadline naming rank 3", r, err)
		}
	}
}

// TestBoardConfigTimeout: Config.Timeout bounds a board wait whose
// context has no deadline.
func TestBoardConfigTimeout(t *testing.T) {
	comms := boardComms(t, 3, shm.Config{}, collective.Config{Timeout: 300 * time.Millisecond})
	allReduceAll(comms, same(3, 2), 20*time.Second)
	start := time.Now()
	err := collective.AllReduce(context.Background(), comms[0], []int64{1}, make([]int64, 1), collective.Sum)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 10*time.Second {
		t.Fatalf("after %v: %v, want the Config.Timeout deadline", time.Since(start), err)
	}
}

// TestBoardPeerCloses: a peer whose endpoint closes while the others
// wait for it on the board fails their call, naming it.
func TestBoardPeerCloses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	eps, err := shm.NewLocalWorld(ctx, 3, shm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	comms := make([]*collective.Comm, 3)
	for i, ep := range eps {
		comms[i], _ = collective.New(ep, 7, collective.Config{})
		defer ep.Close()
	}
	allReduceAll(comms, same(3, 2), 20*time.Second)
	time.AfterFunc(100*time.Millisecond, func() { _ = eps[2].Close() })
	_, errs := allReduceAll(comms[:2], same(2, 2), 20*time.Second)
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "rank 2") {
			t.Fatalf("rank %d: %v, want an error naming rank 2", r, err)
		}
	}
}

// TestBoardAbort: Abort on one rank ends the board waits of every rank.
func TestBoardAbort(t *testing.T) {
	comms := boardComms(t, 3, shm.Config{}, collective.Config{})
	allReduceAll(comms, same(3, 2), 20*time.Second)
	time.AfterFunc(100*time.Millisecond, func() { _ = comms[2].Abort() })
	_, errs := allReduceAll(comms[:2], same(2, 2), 20*time.Second)
	for r, err := range errs {
		if !errors.Is(err, collective.ErrAborted) {
			t.Fatalf("rank %d: %v, want ErrAborted", r, err)
		}
	}
}
