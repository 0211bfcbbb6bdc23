package metaroce_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/stretchr/testify/require"
)

// TestUnexpectedStorm is bench/rss.sh's storm at small scale: several
// senders each post more messages to node 0 than its message window and
// unexpected budget hold (a small header and 16 KiB of data per message
// pair, as gocoll's collective layer sends them), and node 0 posts no
// receive for longer than PeerTimeout. A receiver that holds nothing more
// must still answer, so no connection fails (no false peer timeout), and
// once node 0 posts its receives every message arrives intact.
func TestUnexpectedStorm(t *testing.T) {
	const size = 16 << 10
	hold := 3 * time.Second
	for _, tc := range []struct {
		senders, pairs, window int
		budget                 int64
	}{{3, 100, 64, 128 << 10}, {1, 2100, 4096, 4 << 20}} {
		for _, seed := range []int64{1, 2} {
			senders, pairs := tc.senders, tc.pairs
			t.Run(fmt.Sprint(tc.senders, "x", tc.pairs, "/seed", seed), func(t *testing.T) {
				cfg := metaroce.Config{Paths: 1, MsgWindow: tc.window, UnexpectedBytes: tc.budget, MaxSends: 2 * pairs, MaxRecvs: 2 * pairs,
					PeerTimeout: 500 * time.Millisecond}
				s := newSim(t, seed, senders+1, cfg)
				_, in, out := incastNet(s, senders)
				var failed []string
				s.onEvent = func(node int, at time.Duration, ev metaroce.Event) {
					if ev.Kind == metaroce.EventClosed || ((ev.Kind == metaroce.EventSendDone || ev.Kind == metaroce.EventRecvDone) && ev.Err != nil) {
						failed = append(failed, fmt.Sprintf("node %d at %v: %v %v", node, at, ev.Kind, ev.Err))
					}
				}
				start := s.fab.Now()
				for i := 1; i <= senders; i++ {
					for m := range pairs {
						require.NoError(t, s.eps[i].Send(start, out[i], 1, uint64(2*m), fill(64, byte(i))))
						require.NoError(t, s.eps[i].Send(start, out[i], 1, uint64(2*m+1), fill(size, byte(i+m))))
					}
				}
				s.runTo(start + hold)
				require.Empty(t, failed, "while node 0 posted nothing")
				// Then node 0 takes the messages as gocoll's receiver does: one
				// pair per sender at a time, the next posted once it is in.
				bufs := make(map[[2]int][]byte)
				next := make([]int, senders+1)
				post := func(at time.Duration, i int) {
					m := next[i]
					next[i]++
					for k, n := range []int{64, size} {
						b := make([]byte, n)
						bufs[[2]int{i, 2*m + k}] = b
						require.NoError(t, s.eps[0].PostRecv(at, in[i], 1, uint64(2*m+k), b))
					}
				}
				doneRecv := make([]int, senders+1)
				s.onEvent = func(node int, at time.Duration, ev metaroce.Event) {
					if ev.Kind == metaroce.EventClosed || ((ev.Kind == metaroce.EventSendDone || ev.Kind == metaroce.EventRecvDone) && ev.Err != nil) {
						failed = append(failed, fmt.Sprintf("node %d at %v: %v %v", node, at, ev.Kind, ev.Err))
						return
					}
					if node != 0 || ev.Kind != metaroce.EventRecvDone {
						return
					}
					for i := 1; i <= senders; i++ {
						if ev.Conn == in[i] {
							doneRecv[i]++
							if doneRecv[i]%2 == 0 && next[i] < pairs {
								post(at, i)
							}
						}
					}
				}
				at := s.fab.Now()
				for i := 1; i <= senders; i++ {
					post(at, i)
				}
				s.runUntil(at+60*time.Second, func() bool {
					if len(failed) > 0 {
						return true
					}
					for i := 1; i <= senders; i++ {
						if doneRecv[i] < 2*pairs {
							return false
						}
					}
					return true
				})
				require.Empty(t, failed)
				for i := 1; i <= senders; i++ {
					for m := range 2 * pairs {
						n := size
						if m%2 == 0 {
							n = 64
						}
						require.Equal(t, fill(n, byte(i+(m/2)*(m%2))), bufs[[2]int{i, m}], "sender %d message %d", i, m)
					}
				}
			})
		}
	}
}
