// Package transporttest is the conformance suite for implementations of
// [transport.Endpoint]. A transport's own tests call [Run] with a factory
// that builds a connected world, and every promise of the transport contract
// is then checked in a subtest: matching by (peer, tag) with FIFO order per
// tag, receives posted before and after the message arrives, 0-byte and
// large messages, short and truncated receives, Wait with an ended context,
// Cancel, Abort, Close, bad ranks and concurrent use. The Abort subtests
// check that an abort ends its operation on the aborting rank and on every
// told peer, for requests to and from any rank (see [transport.Endpoint]).
//
// A transport's test looks like this:
//
//	func TestConformance(t *testing.T) {
//		transporttest.Run(t, func(t *testing.T, size int) []transport.Endpoint {
//			eps := newWorld(size) // the transport's own constructor
//			t.Cleanup(func() {
//				for _, ep := range eps {
//					ep.Close()
//				}
//			})
//			return eps
//		})
//	}
//
// Every wait in the suite has a deadline ([WaitTimeout]), so a transport that
// loses a message fails the subtest instead of hanging. Message counts are
// modest so that a transport over a real network finishes in seconds.
package transporttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport"
)

// WaitTimeout bounds every single wait of the suite (three times it under
// the race detector). A request that has not completed by then fails the
// subtest.
const WaitTimeout = 10 * time.Second

// waitTimeout is the deadline the suite uses: WaitTimeout, times
// RaceSlowdown, shortened only by the suite's own tests of broken
// transports, which are expected to get stuck.
var waitTimeout = WaitTimeout * RaceSlowdown

// LargeBytes is the size of the suite's large messages (8 MiB).
const LargeBytes = 8 << 20

// WorldFactory builds a connected world of size endpoints, where element i
// has rank i, and registers its cleanup with t (for example t.Cleanup calling
// Close on each endpoint). It fails t if the world cannot be built.
type WorldFactory func(t *testing.T, size int) []transport.Endpoint

// Run runs the conformance suite against the transport built by newWorld.
// Each subtest builds its own world, so one failure does not spill into the
// next. Run may be called from a test of any package.
func Run(t *testing.T, newWorld func(t *testing.T, size int) []transport.Endpoint) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, newWorld) })
	}
}

type testCase struct {
	name string
	run  func(t *testing.T, newWorld WorldFactory)
}

var cases = []testCase{
	{"RankSize", testRankSize},
	{"AllPairs", testAllPairs},
	{"FIFOSameTag", testFIFOSameTag},
	{"TagsIndependent", testTagsIndependent},
	{"RecvAfterArrival", testRecvAfterArrival},
	{"ZeroBytes", testZeroBytes},
	{"Large", testLarge},
	{"ShorterMessage", testShorterMessage},
	{"Truncated", testTruncated},
	{"WaitContext", testWaitContext},
	{"Cancel", testCancel},
	{"CancelSend", testCancelSend},
	{"Abort", testAbort},
	{"AbortEndsSends", testAbortEndsSends},
	{"AbortDropsLateMessages", testAbortDropsLate},
	{"AbortKeepsFirstError", testAbortKeepsFirstError},
	{"Close", testClose},
	{"PeerCloseDelivers", testPeerCloseDelivers},
	{"BadRank", testBadRank},
	{"Concurrent", testConcurrent},
	{"Stats", testStats},
}

// tag builds the suite's tag for operation op and message index seq.
func tag(op uint64, seq uint32) transport.Tag {
	return transport.Tag{OpKey: transport.OpKey{Comm: 0x5e11e, Op: op}, Seq: seq}
}

// Fill writes a deterministic pattern derived from seed into buf, so that a
// receiver can check with [Verify] that a message arrived intact and in the
// right place.
func Fill(buf []byte, seed uint64) {
	x := seed*0x9e3779b97f4a7c15 + 1
	for i := range buf {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		buf[i] = byte(x >> 32)
	}
}

// Pattern returns a new n-byte buffer filled by [Fill] with seed.
func Pattern(n int, seed uint64) []byte {
	b := make([]byte, n)
	Fill(b, seed)
	return b
}

// Verify reports whether buf holds the pattern [Fill] writes for seed, and
// if not, the first differing offset.
func Verify(buf []byte, seed uint64) error {
	want := Pattern(len(buf), seed)
	if bytes.Equal(buf, want) {
		return nil
	}
	for i := range buf {
		if buf[i] != want[i] {
			return fmt.Errorf("pattern %d: %d-byte buffer differs first at offset %d", seed, len(buf), i)
		}
	}
	panic("unreachable: unequal buffers with no differing byte")
}

// wait waits for r with the suite's deadline and fails t if r is still
// pending then. It returns r's result.
func wait(t testing.TB, r transport.Request, what string) (int, error) {
	t.Helper()
	n, err := waitErr(r)
	if errors.Is(err, errStuck) {
		t.Fatalf("%s: %v", what, err)
	}
	return n, err
}

var errStuck = errors.New("request still pending after WaitTimeout")

// waitErr waits for r with the suite's deadline; a request still pending
// then yields an error wrapping errStuck. Safe to call from any goroutine.
func waitErr(r transport.Request) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	n, err := r.Wait(ctx)
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return n, fmt.Errorf("%w (%v)", errStuck, waitTimeout)
	}
	return n, err
}

// waitOK waits for r and fails t unless it completed with n == want.
func waitOK(t testing.TB, r transport.Request, want int, what string) {
	t.Helper()
	n, err := wait(t, r, what)
	if err != nil {
		t.Fatalf("%s: unexpected error: %v", what, err)
	}
	if n != want {
		t.Fatalf("%s: got %d bytes, want %d", what, n, want)
	}
}

// waitFail waits for r and fails t unless it failed with an error for which
// match returns true.
func waitFail(t testing.TB, r transport.Request, what string, match func(error) bool) error {
	t.Helper()
	n, err := wait(t, r, what)
	if err == nil {
		t.Fatalf("%s: completed with %d bytes, want an error", what, n)
	}
	if !match(err) {
		t.Fatalf("%s: wrong error: %v", what, err)
	}
	return err
}

// isErr returns a matcher for errors.Is(err, target).
func isErr(target error) func(error) bool {
	return func(err error) bool { return errors.Is(err, target) }
}

// requirePending fails t if r has already completed.
func requirePending(t testing.TB, r transport.Request, what string) {
	t.Helper()
	select {
	case <-r.Done():
		n, err := r.Wait(context.Background())
		t.Fatalf("%s: completed early (n=%d, err=%v), want still pending", what, n, err)
	default:
	}
}

// requireDone fails t if r's Done channel is not closed.
func requireDone(t testing.TB, r transport.Request, what string) {
	t.Helper()
	select {
	case <-r.Done():
	default:
		t.Fatalf("%s: Done channel not closed after Wait returned", what)
	}
}

// checkData fails t unless buf holds the pattern of seed.
func checkData(t testing.TB, buf []byte, seed uint64, what string) {
	t.Helper()
	if err := Verify(buf, seed); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
