//go:build linux

package lab_test

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gocoll/gocoll/lab"
	"github.com/gocoll/gocoll/transport"
)

// The priority band: datagrams marked Spec.PriorityDSCP, sent behind a
// full queue of data on a rate-limited, delayed path, pass the data (the
// delay daemon keeps their mark and their band) and are counted in the
// band; with the band off (PriorityDSCP -1) they wait behind all of it.
func TestPriorityBand(t *testing.T) {
	const data, marked = 60, 5
	for _, dscp := range []int{0, -1} {
		t.Run(map[int]string{0: "band", -1: "fifo"}[dscp], func(t *testing.T) {
			ctx := context.Background()
			l := upLab(t, lab.Spec{Paths: 1, HostsPerSite: 1, RateMbit: 10, DelayMS: 2, QueueMS: 100, PriorityDSCP: dscp})
			a := udpIn(t, l, "s1h1", netip.AddrPortFrom(hostAddr(t, l, "s1h1"), 0))
			c := udpIn(t, l, "s1h1", netip.AddrPortFrom(hostAddr(t, l, "s1h1"), 0))
			raw, err := c.SyscallConn()
			require.NoError(t, err)
			require.NoError(t, raw.Control(func(fd uintptr) {
				err = syscall.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_TOS, lab.DefaultPriorityDSCP<<2)
			}))
			require.NoError(t, err)
			b := udpIn(t, l, "s2h1", netip.AddrPortFrom(hostAddr(t, l, "s2h1"), 5000))
			to := b.LocalAddr().(*net.UDPAddr)

			order := make(chan []byte, 1)
			go func() {
				var got []byte
				buf := make([]byte, 2048)
				for {
					_ = b.SetReadDeadline(time.Now().Add(2 * time.Second))
					if _, err := b.Read(buf); err != nil {
						order <- got
						return
					}
					got = append(got, buf[0])
				}
			}()
			// 60 x 1400 bytes queue ~70 ms at 10 Mbit/s (the queue holds
			// 100 ms): the marked datagrams are sent behind all of them.
			d := make([]byte, 1400)
			d[0] = 'd'
			for range data {
				_, err := a.WriteToUDP(d, to)
				require.NoError(t, err)
			}
			for range marked {
				_, err := c.WriteToUDP([]byte("c"), to)
				require.NoError(t, err)
			}
			got := <-order
			require.Len(t, got, data+marked, "datagrams lost: %q", got)
			first := -1
			for i, x := range got {
				if x == 'c' {
					first = i
					break
				}
			}
			stats, err := l.Stats(ctx)
			require.NoError(t, err)
			fwd := stats[0]
			require.Equal(t, lab.Fwd, fwd.Dir)
			out, err := l.Exec(ctx, "s1r", "tc", "qdisc", "show", "dev", "s2p1")
			require.NoError(t, err)
			t.Logf("first marked datagram arrived %d of %d; band packets %d; %s", first, len(got), fwd.PrioPackets, out)
			if dscp < 0 {
				require.Equal(t, data, first, "a FIFO let a marked datagram pass data")
				require.Zero(t, fwd.PrioPackets)
				require.NotContains(t, string(out), "pfifo_fast")
				return
			}
			require.Less(t, first, data/2, "the marked datagrams waited behind the data")
			require.GreaterOrEqual(t, fwd.PrioPackets, uint64(marked))
			require.Less(t, fwd.PrioPackets, uint64(data), "data took the priority band")
			require.Contains(t, string(out), "pfifo_fast 10: parent 1:1")
		})
	}
}

// MetaRoCE's control datagrams take the band: over a rate-limited path,
// a one-way transfer's ACKs (the reverse direction) are counted in the
// band, and its DATA (the forward direction) is not.
func TestMetaRoCEAcksTakeTheBand(t *testing.T) {
	l := upLab(t, lab.Spec{Paths: 1, HostsPerSite: 1, RateMbit: 100})
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	eps := mrWorld(t, ctx, l, []string{"s1h1", "s2h1"}, []uint16{42000, 43000})
	const size = 4 << 20
	tag := transport.Tag{OpKey: transport.OpKey{Comm: 9, Op: 1}}
	r := eps[1].Recv(0, tag, make([]byte, size))
	s := eps[0].Send(1, tag, make([]byte, size))
	for _, q := range []transport.Request{r, s} {
		_, err := q.Wait(ctx)
		require.NoError(t, err)
	}
	stats, err := l.Stats(ctx)
	require.NoError(t, err)
	var sb strings.Builder
	lab.FormatStats(&sb, stats)
	t.Logf("lab counters:\n%s", sb.String())
	fwd, rev := stats[0], stats[1]
	require.Equal(t, lab.Rev, rev.Dir)
	require.Greater(t, fwd.TxBytes, uint64(size))
	require.Positive(t, rev.PrioPackets, "no ACK took the band")
	require.GreaterOrEqual(t, rev.PrioPackets*10, rev.TxPackets*9, "the ACKs did not all take the band")
	require.Less(t, fwd.PrioPackets*10, fwd.TxPackets, "DATA took the band")
}

// burstAcross sends burst datagrams of 1400 bytes from s1h1 to s2h1 of a
// one-path lab, runs between (nil: nothing) once they are sent, and
// returns how many arrived: the receiver counts until none came for 2 s.
func burstAcross(t *testing.T, l *lab.Lab, burst int, between func()) int {
	a := udpIn(t, l, "s1h1", netip.AddrPortFrom(hostAddr(t, l, "s1h1"), 0))
	b := udpIn(t, l, "s2h1", netip.AddrPortFrom(hostAddr(t, l, "s2h1"), 5000))
	to := b.LocalAddr().(*net.UDPAddr)
	got := make(chan int, 1)
	go func() {
		n, buf := 0, make([]byte, 2048)
		for {
			_ = b.SetReadDeadline(time.Now().Add(2 * time.Second))
			if _, err := b.Read(buf); err != nil {
				got <- n
				return
			}
			n++
		}
	}()
	d := make([]byte, 1400)
	for range burst {
		_, err := a.WriteToUDP(d, to)
		require.NoError(t, err)
	}
	if between != nil {
		between()
	}
	return <-got
}

// A rate changed by Shape resizes the priority qdisc's data band: brought
// up at 100 Mbit/s, shaped to 10, the path's queue holds QueueMS at 10
// Mbit/s (about 90 datagrams of 1400 bytes), not the 100 Mbit/s band's
// ~840, so most of a burst of 400 datagrams is dropped, not delayed.
func TestPriorityBandFollowsRate(t *testing.T) {
	const burst = 400
	ctx := context.Background()
	l := upLab(t, lab.Spec{Paths: 1, HostsPerSite: 1, RateMbit: 100, QueueMS: 100})
	p, err := l.ParsePath("1")
	require.NoError(t, err)
	require.NoError(t, l.Shape(ctx, p, []lab.Dir{lab.Fwd}, lab.Shape{RateMbit: 10}))
	n := burstAcross(t, l, burst, nil)
	out, err := l.Exec(ctx, "s1r", "tc", "-s", "qdisc", "show", "dev", "s2p1")
	require.NoError(t, err)
	t.Logf("%d of %d datagrams arrived; %s", n, burst, out)
	require.Less(t, n, burst/2, "the data band kept the queue of the first rate")
}

// A Shape that leaves a rated path end's rate as it was keeps the queue of
// its data band (only a changed rate remakes the band): 60 datagrams
// queued forward at 2 Mbit/s all arrive across a no-op Shape of the reverse
// direction (review B14 M2: a remake on every Shape dropped 49).
func TestPriorityBandKeptAcrossShape(t *testing.T) {
	const burst = 60
	ctx := context.Background()
	l := upLab(t, lab.Spec{Paths: 1, HostsPerSite: 1, RateMbit: 2, QueueMS: 500})
	p, err := l.ParsePath("1")
	require.NoError(t, err)
	n := burstAcross(t, l, burst, func() {
		require.NoError(t, l.Shape(ctx, p, []lab.Dir{lab.Rev}, lab.Shape{RateMbit: 2}))
	})
	require.Equal(t, burst, n, "a Shape that changed no rate dropped the forward queue")
}
