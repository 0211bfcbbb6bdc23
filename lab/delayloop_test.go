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

// The loop's waits: at once while a full batch came in; for the next
// message when nothing is held or arrivals carry no kernel stamp; else,
// without waking for arrivals, until the earliest held packet falls due,
// no sooner than d.slack after the wake-up and no later than d.hold
// after it.
func TestDelaydNextWait(t *testing.T) {
	d := &delayd{slack: 100 * time.Microsecond}
	d.setQueues(map[uint16]delaydQueue{1: {Queue: 1, Delay: 2 * time.Millisecond}, 2: {Queue: 2}, 3: {Queue: 3, Delay: 5 * time.Millisecond, Jitter: time.Millisecond}})
	require.Equal(t, int64(2*time.Millisecond), d.hold.Load(), "the queue without delay does not count")
	wake := time.Now()
	now := wake.Add(10 * time.Microsecond)
	check := func(n int, wantWait time.Duration, wantFd bool) {
		t.Helper()
		w, fd := d.nextWait(n, wake, now)
		require.Equal(t, [2]any{wantWait, wantFd}, [2]any{w, fd})
	}
	check(0, delaydIdle, true)
	check(delaydRecvBatch, 0, true)
	d.held.push(heldPacket{due: wake.Add(30 * time.Microsecond)})
	check(1, 90*time.Microsecond, true) // not stamped: arrivals wake it
	d.stamped = true
	check(1, 90*time.Microsecond, false) // wake-ups d.slack apart
	d.held = d.held[:0]
	d.held.push(heldPacket{due: wake.Add(700 * time.Microsecond)})
	check(1, 690*time.Microsecond, false)
	d.held = d.held[:0]
	d.held.push(heldPacket{due: wake.Add(5 * time.Millisecond)})
	check(1, 2*time.Millisecond-10*time.Microsecond, false) // an arrival may fall due after d.hold
	d.held = d.held[:0]
	d.held.push(heldPacket{due: wake.Add(-time.Millisecond)})
	check(1, 90*time.Microsecond, false)

	d.setQueues(map[uint16]delaydQueue{1: {Queue: 1, Delay: time.Millisecond, Jitter: 2 * time.Millisecond}})
	require.Zero(t, d.hold.Load())
	check(1, 90*time.Microsecond, true) // a packet may fall due at once: arrivals wake it

	// A hold shorter than the slack (2.05 ms less 2 ms of jitter): arrivals
	// wake the loop, not a timer every 50 µs.
	d.setQueues(map[uint16]delaydQueue{1: {Queue: 1, Delay: 2050 * time.Microsecond, Jitter: 2 * time.Millisecond}})
	require.Equal(t, int64(50*time.Microsecond), d.hold.Load())
	d.held = d.held[:0]
	d.held.push(heldPacket{due: wake.Add(time.Millisecond)})
	check(1, 990*time.Microsecond, true)
}

// A kernel stamp is the arrival when it is plausible, on the clock of now.
func TestDelaydArrival(t *testing.T) {
	now := time.Now()
	wall := now.Round(0) // no monotonic reading, as a kernel stamp
	for _, c := range []struct {
		stamp time.Time
		want  time.Duration // before now
		ok    bool
	}{
		{time.Time{}, 0, false},
		{wall.Add(-3 * time.Millisecond), 3 * time.Millisecond, true},
		{wall.Add(200 * time.Microsecond), 0, true}, // clocks read apart: not later than now
		{wall.Add(-2 * time.Second), 0, false},
		{wall.Add(5 * time.Millisecond), 0, false},
	} {
		got, ok := arrival(c.stamp, now)
		require.Equal(t, c.ok, ok, "stamp %v", c.stamp)
		require.Equal(t, c.want, now.Sub(got), "stamp %v", c.stamp)
	}
}

func TestDelaydSlackFromEnv(t *testing.T) {
	t.Setenv(delaydSlackEnv, "")
	s, err := delaydSlackFromEnv()
	require.NoError(t, err)
	require.Equal(t, delaydSlack, s)
	t.Setenv(delaydSlackEnv, "250")
	s, err = delaydSlackFromEnv()
	require.NoError(t, err)
	require.Equal(t, 250*time.Microsecond, s)
	for _, bad := range []string{"1001", "-1", "x", "1e3"} {
		t.Setenv(delaydSlackEnv, bad)
		_, err = delaydSlackFromEnv()
		require.Error(t, err, bad)
	}
}
