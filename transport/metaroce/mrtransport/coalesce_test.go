package mrtransport

import (
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/transporttest"
	"github.com/stretchr/testify/require"
)

// coalescedWorld is a loopback world whose endpoints run the endpoint
// reader (MTU-sized datagrams, so not read into place); with allFar every
// peer counts as far, so that the reader naps after every read. With
// byDefault the reader is CoalesceWait's default (left 0), which Connect
// turns on at GOMAXPROCS 1 (takeOver: the socket readers hand over).
func coalescedWorld(t *testing.T, size int, allFar, byDefault bool) []*Endpoint {
	t.Helper()
	linuxOnly(t, "the endpoint reader")
	cfg := Config{MaxDatagram: 1452, CoalesceWait: time.Millisecond}
	if byDefault {
		cfg.CoalesceWait = 0
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	}
	eps := newTestWorld(t, size, cfg)
	for _, ep := range eps {
		e := ep.eng
		require.Equal(t, time.Millisecond, e.coalesce, "endpoint reader off")
		for _, s := range e.socks {
			require.True(t, s.(*udpioSocket).s.Unpolled(), "a socket left in the runtime's poller")
		}
		if allFar {
			e.lock()
			e.far.of = func(_ time.Duration, far map[netip.AddrPort]bool) {
				ep.farPeers(0, far) // every connected peer's addresses, far
			}
			e.far.at = 0
			e.mu.Unlock()
		}
	}
	return eps
}

// TestConformanceCoalesced runs the conformance suite over the endpoint
// reader, with the loopback's near peers (no naps) and with every peer
// taken for far (a nap after every read), and over the reader that the
// default turned on at Connect (near peers).
func TestConformanceCoalesced(t *testing.T) {
	for _, allFar := range []bool{false, true} {
		t.Run(map[bool]string{false: "near", true: "far"}[allFar], func(t *testing.T) {
			transporttest.Run(t, func(t *testing.T, size int) []transport.Endpoint {
				return asTransport(coalescedWorld(t, size, allFar, false))
			})
		})
	}
	t.Run("default", func(t *testing.T) {
		transporttest.Run(t, func(t *testing.T, size int) []transport.Endpoint {
			return asTransport(coalescedWorld(t, size, false, true))
		})
	})
}

// TestCoalesceDefault: CoalesceWait left 0 turns the endpoint reader on at
// Connect with GOMAXPROCS 1 and MTU-sized datagrams only; negative is off.
func TestCoalesceDefault(t *testing.T) {
	linuxOnly(t, "the endpoint reader")
	cases := []struct {
		name  string
		procs int
		cfg   Config
		on    bool
	}{
		{"one processor", 1, Config{MaxDatagram: 1452}, true},
		{"two processors", 2, Config{MaxDatagram: 1452}, false},
		{"off", 1, Config{MaxDatagram: 1452, CoalesceWait: -1}, false},
		{"loopback datagrams", 1, Config{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old := runtime.GOMAXPROCS(c.procs)
			eps := newTestWorld(t, 2, c.cfg)
			runtime.GOMAXPROCS(old)
			for _, ep := range eps {
				want := time.Duration(0)
				if c.on {
					want = DefaultCoalesceWait
				}
				require.Equal(t, want, ep.eng.coalesce)
				for _, s := range ep.eng.socks {
					require.Equal(t, c.on, s.(*udpioSocket).s.Unpolled())
				}
			}
			sendRecvCheck(t, eps)
		})
	}
}

// TestCoalescedNaps: the endpoint reader naps for far peers' datagrams
// only. The far case sends until a nap is counted (up to 40 rounds of 5
// MiB): the reader naps only once a whole window of farStreamNaps naps
// saw a dense stream, which a loaded machine's stalls can deny a single
// round of ~30 ms.
func TestCoalescedNaps(t *testing.T) {
	naps := func(eps []*Endpoint) int64 {
		return eps[0].Stats().Engine.Naps + eps[1].Stats().Engine.Naps
	}
	near := coalescedWorld(t, 2, false, false)
	sendRecvCheck(t, near)
	require.Zero(t, naps(near), "naps with near (loopback) peers")

	far := coalescedWorld(t, 2, true, false)
	for round := 0; round < 40 && naps(far) == 0; round++ {
		sendRecvCheck(t, far)
	}
	require.Positive(t, naps(far), "no nap with far peers in 40 rounds of 5 MiB")
}

// sendRecvCheck sends five 1 MiB messages from eps[0] to eps[1] and checks
// what arrives.
func sendRecvCheck(t *testing.T, eps []*Endpoint) {
	t.Helper()
	ctx := t.Context()
	buf := make([]byte, 1<<20)
	got := make([]byte, len(buf))
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	for i := range 5 {
		tag := transport.Tag{OpKey: transport.OpKey{Comm: 7, Op: uint64(i)}}
		r := eps[1].Recv(0, tag, got)
		s := eps[0].Send(1, tag, buf)
		_, err := s.Wait(ctx)
		require.NoError(t, err)
		_, err = r.Wait(ctx)
		require.NoError(t, err)
		require.Equal(t, buf, got)
	}
}

// TestFarStream: the reader naps only after a whole window in which far
// peers sent at least farStreamBatch datagrams a nap, and stops after a
// window below it or a silence of two windows.
func TestFarStream(t *testing.T) {
	const wait, size = time.Millisecond, 9000
	window := farStreamNaps * wait
	need := int64(farStreamNaps * farStreamBatch * size)
	t0 := time.Unix(1000, 0)
	var s farStream
	require.False(t, s.note(t0, 0, wait, size), "no window yet")
	require.False(t, s.note(t0.Add(wait), need, wait, size), "the window is not over")
	require.True(t, s.note(t0.Add(window), need, wait, size), "a dense window")
	require.True(t, s.note(t0.Add(window+wait), need, wait, size), "dense until the next window ends")
	require.False(t, s.note(t0.Add(2*window), need+need/2, wait, size), "half the bytes: sparse")
	require.True(t, s.note(t0.Add(3*window), 3*need, wait, size), "dense again")
	require.False(t, s.note(t0.Add(6*window), 10*need, wait, size), "after a silence of two windows")
	// A small-message stream: 64 KiB every 4 ms is sparse.
	var m farStream
	total := int64(0)
	dense := false
	for i := range 100 {
		total += 64 << 10
		dense = dense || m.note(t0.Add(time.Duration(i)*4*wait), total, wait, size)
	}
	require.False(t, dense, "64 KiB every 4 ms took for a stream")
}
