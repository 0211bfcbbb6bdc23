package launcher

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/gocoll/gocoll/launcher/store"
	"github.com/gocoll/gocoll/transport"
)

// unansweredStore answers no write: each waits for its context to end (a
// store behind a network cut). It records whether the "left" note's
// CompareAndSet was tried and whether it has returned.
type unansweredStore struct {
	store.Store
	tried    chan struct{} // closed when the CompareAndSet begins
	returned atomic.Bool
	done     chan struct{} // closed when it returns
}

func (*unansweredStore) Set(ctx context.Context, _ string, _ []byte) error {
	<-ctx.Done()
	return ctx.Err()
}

func (s *unansweredStore) CompareAndSet(ctx context.Context, _ string, _, _ []byte) ([]byte, bool, error) {
	close(s.tried)
	<-ctx.Done()
	s.returned.Store(true)
	close(s.done)
	return nil, false, ctx.Err()
}

type closedEndpoint struct{ transport.Endpoint }

func (closedEndpoint) Close() error { return nil }

// Abort notes its abort within publishWait and leaves at once (abort.go),
// its "left" note for ranks still forming the world included: it does not
// wait for a store that does not answer until the note's noteTimeout
// ends. (The check is of order, not time: Abort returns before the
// CompareAndSet's context, noteTimeout, ends.)
func TestAbortDoesNotWaitForTheLeftNote(t *testing.T) {
	done := make(chan struct{})
	close(done)
	kv := &unansweredStore{tried: make(chan struct{}), done: make(chan struct{})}
	lc := &lifecycle{job: Job{Rank: 1}, log: slog.New(slog.DiscardHandler), kv: kv,
		claimed: true, guard: &guardedEndpoint{inner: closedEndpoint{}},
		stopBeat: func() {}, beatDone: done, stopWatch: func() {}, watchDone: done}
	_ = lc.Abort()
	returned := kv.returned.Load()
	<-kv.tried // the note was tried
	<-kv.done  // and ends (noteTimeout) before the test does
	if returned {
		t.Errorf("Abort returned only after the left note's CompareAndSet did: it waited noteTimeout (%v) for a store that does not answer, not publishWait (%v)", noteTimeout, publishWait)
	}
}

// Three ranks, rank 2 never comes; rank 0's connect timeout is 2 s, rank
// 1's 4 s. Rank 0 gives up first, which is no fault of its own: rank 1
// must not fail blaming it (a PeerError naming rank 0, ErrRankLeft) but
// time out in turn, naming the rank missing.
func TestSetUpTimeoutBlamesNobody(t *testing.T) {
	if testing.Short() {
		t.Skip("4 s of connect timeout")
	}
	addr, _ := setUpStore(t)
	const n = 3
	bg := context.Background()
	errs := startJoins(t, n, map[int]context.Context{0: bg, 1: bg}, func(r int) []string {
		to := "=4s"
		if r == 0 {
			to = "=2s"
		}
		return rankEnv(t, addr, r, n, EnvConnectTimeout+to)
	})()
	for r := range 2 {
		t.Logf("rank %d: %v", r, errs[r])
		var pe *transport.PeerError
		if errors.As(errs[r], &pe) || errors.Is(errs[r], ErrRankLeft) {
			t.Errorf("rank %d's error blames rank %d, which gave up waiting; the missing rank is 2", r, pe.Rank)
		}
		var missing *store.MissingRanksError
		if !errors.As(errs[r], &missing) || len(missing.Ranks) != 1 || missing.Ranks[0] != 2 || !errors.Is(errs[r], context.DeadlineExceeded) {
			t.Errorf("rank %d's error does not say it timed out with rank 2 missing", r)
		}
	}
}
