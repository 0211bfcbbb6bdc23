//go:build linux

package lab

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The loop's receive takes every queued datagram in one recvmmsg, and
// take holds each packet message of them (several may share a datagram)
// with its queue's delay, skipping what is not a packet message.
func TestDelaydRecvAndTake(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	dgrams := [][]byte{
		packetMsg(513, 7),
		append(packetMsg(2, 8), packetMsg(513, 9)...),
		appendVerdict(nil, 513, 1, nfAccept), // not a packet message
		packetMsg(2, 10)[:20],                // cut short
	}
	for _, b := range dgrams {
		_, err := unix.Write(fds[1], b)
		require.NoError(t, err)
	}
	rx := newNlBatch(2, 256) // fewer slots than datagrams: two receives
	var n []int
	for {
		k, err := rx.recv(fds[0])
		require.NoError(t, err)
		if k == 0 {
			break
		}
		n = append(n, k)
		d := &delayd{rng: rand.New(rand.NewPCG(1, 2))}
		qs := map[uint16]delaydQueue{513: {Queue: 513, Delay: 5 * time.Millisecond}, 2: {Queue: 2, Delay: time.Millisecond}}
		d.queues.Store(&qs)
		now := time.Unix(100, 0)
		require.Empty(t, d.take(rx, k, now, nil))
		if len(n) == 1 {
			require.Len(t, d.held, 3)
			var got [][2]int64
			for len(d.held) > 0 {
				p := d.held.pop()
				require.Equal(t, now, p.arrive)
				got = append(got, [2]int64{int64(p.id), int64(p.due.Sub(now) / time.Millisecond)})
			}
			require.Equal(t, [][2]int64{{8, 1}, {7, 5}, {9, 5}}, got)
		} else {
			require.Empty(t, d.held)
		}
	}
	require.Equal(t, []int{2, 2}, n)
}
