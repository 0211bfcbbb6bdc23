package launcher

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport/metaroce/mrtransport"
)

// udpBlock drops the datagrams MetaRoCE writes between two ranks, as a
// firewall between their hosts would: each rank's sockets are registered
// as they open, and a write to a socket of the rank paired with the
// writer's is dropped.
type udpBlock struct {
	a, b   int  // the blocked pair
	oneWay bool // only a's datagrams to b are dropped

	mu    sync.Mutex
	owner map[netip.AddrPort]int // socket address -> rank
}

func newUDPBlock(a, b int) *udpBlock {
	return &udpBlock{a: a, b: b, owner: map[netip.AddrPort]int{}}
}

func (u *udpBlock) opener(rank int) mrtransport.SocketOpener {
	return func(_ int, addr netip.AddrPort) (mrtransport.PathSocket, error) {
		s, err := mrtransport.OpenUDP(addr, mrtransport.DefaultSocketBuffer)
		if err != nil {
			return nil, err
		}
		u.mu.Lock()
		u.owner[s.LocalAddr()] = rank
		u.mu.Unlock()
		return &blockedSocket{PathSocket: s, u: u, rank: rank}, nil
	}
}

func (u *udpBlock) dropped(from int, to netip.AddrPort) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	r, ok := u.owner[to]
	return ok && (from == u.a && r == u.b || !u.oneWay && from == u.b && r == u.a)
}

type blockedSocket struct {
	mrtransport.PathSocket
	u    *udpBlock
	rank int
}

func (s *blockedSocket) WriteBatch(ms []mrtransport.Message) (int, error) {
	var out []mrtransport.Message
	for _, m := range ms {
		if !s.u.dropped(s.rank, m.Addr) {
			out = append(out, m)
		}
	}
	if len(out) > 0 {
		if _, err := s.PathSocket.WriteBatch(out); err != nil {
			return 0, err
		}
	}
	return len(ms), nil
}

// joinBlocked forms a world of n ranks (two per host) with UDP blocked
// between ranks a and b, and returns the worlds, errors and notices.
func joinBlocked(t *testing.T, n, a, b int, extra ...string) ([]*World, []error, []*bytes.Buffer) {
	return joinBlockedBy(t, n, newUDPBlock(a, b), extra...)
}

func joinBlockedBy(t *testing.T, n int, block *udpBlock, extra ...string) ([]*World, []error, []*bytes.Buffer) {
	addr := testStore(t)
	worlds, errs := make([]*World, n), make([]error, n)
	notices := make([]*bytes.Buffer, n)
	var wg sync.WaitGroup
	for r := range n {
		notices[r] = new(bytes.Buffer)
		env := rankEnv(t, addr, r, n, append([]string{EnvUDPProbeTimeout + "=2s"}, extra...)...)
		job, err := ParseEnv(LookupIn(env))
		require.NoError(t, err)
		job.openSocket, job.notices = block.opener(r), notices[r]
		wg.Go(func() { worlds[r], errs[r] = Join(context.Background(), job, collective.Config{}) })
	}
	wg.Wait()
	t.Cleanup(func() { closeAll(t, worlds) })
	return worlds, errs, notices
}

// With the default transport, ranks 1 and 2 (on hosts h0 and h1) between
// which UDP is blocked reach each other through TCP, each saying so in one
// line; the other pairs keep MetaRoCE (and shared memory), and the world's
// collectives work.
func TestUDPBlockedFallsBackToTCP(t *testing.T) {
	const n = 4
	worlds, errs, notices := joinBlocked(t, n, 1, 2)
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
	want := map[int]string{
		1: "gocoll: rank 1: UDP to rank 2 (127.0.0.1) is blocked (no MetaRoCE handshake within 2s): using TCP for that pair\n",
		2: "gocoll: rank 2: UDP to rank 1 (127.0.0.1) is blocked (no MetaRoCE handshake within 2s): using TCP for that pair\n",
	}
	for r := range n {
		require.Equal(t, want[r], notices[r].String(), "rank %d's notices", r)
		require.Equal(t, TransportSHMMetaRoCE+"+tcp", worlds[r].Job().Transport, "rank %d", r)
	}
	sumRanks(t, worlds)
	// Rank 1 to rank 2 directly, and back: only TCP can carry it.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { require.NoError(t, collective.Send(ctx, worlds[1].Comm, []int32{7}, 2)) })
	got := []int32{0}
	wg.Go(func() { require.NoError(t, collective.Recv(ctx, worlds[2].Comm, got, 1)) })
	wg.Wait()
	require.Equal(t, []int32{7}, got)
}

// With GOCOLL_TRANSPORT=metaroce, every rank fails with one line naming
// the blocked pair and what to do.
func TestUDPBlockedForcedMetaRoCEFails(t *testing.T) {
	const n = 3
	_, errs, notices := joinBlocked(t, n, 0, 2, EnvTransport+"="+TransportMetaRoCE)
	for r, err := range errs {
		require.Error(t, err, "rank %d", r)
		msg := err.Error()
		require.NotContains(t, msg, "\n")
		require.Contains(t, msg, "UDP is blocked between rank 0 (127.0.0.1) and rank 2 (127.0.0.1): "+
			"no MetaRoCE handshake within 2s (GOCOLL_UDP_PROBE_TIMEOUT); open UDP between those hosts "+
			"(GOCOLL_UDP_PORTS chooses the ports), or leave GOCOLL_TRANSPORT unset to use TCP for such pairs", "rank %d", r)
		require.True(t, strings.HasPrefix(msg, "gocoll: rank "), msg)
		require.Empty(t, notices[r].String())
	}
}

// UDP blocked one way only: from rank 3 to rank 0 (the higher rank's
// answers to the lower's handshake), and then from rank 0 to rank 3 (its
// handshake). Either way both ranks agree the pair uses TCP.
func TestUDPBlockedOneWay(t *testing.T) {
	if testing.Short() {
		t.Skip("two more probes of 2 s: not in -short")
	}
	for _, dir := range [][2]int{{3, 0}, {0, 3}} {
		t.Run(fmt.Sprintf("%d to %d", dir[0], dir[1]), func(t *testing.T) {
			const n = 4
			block := newUDPBlock(dir[0], dir[1])
			block.oneWay = true
			worlds, errs, notices := joinBlockedBy(t, n, block)
			for r, err := range errs {
				require.NoError(t, err, "rank %d", r)
			}
			require.Contains(t, notices[0].String(), "UDP to rank 3 (127.0.0.1) is blocked")
			require.Contains(t, notices[3].String(), "UDP to rank 0 (127.0.0.1) is blocked")
			require.Empty(t, notices[1].String())
			require.Empty(t, notices[2].String())
			sumRanks(t, worlds)
		})
	}
}

// The probe's results come from the store: whatever they hold, the
// exchange fails with an error or gives blocked pairs that are sorted,
// distinct, within the world, and agree with this rank's blocked peers.
func FuzzExchangeProbe(f *testing.F) {
	f.Add([]byte("[]"), []byte("[2]"), []byte("[1]"))
	f.Add([]byte("null"), []byte("[0,0]"), []byte("[-1]"))
	f.Add([]byte("[1,2]"), []byte("{"), []byte("[3]"))
	f.Fuzz(func(t *testing.T, v0, v1, v2 []byte) {
		const n = 3
		spec := transportSpec{Rank: 1, Size: n,
			Exchange: func(context.Context, string, []byte) ([][]byte, error) { return [][]byte{v0, v1, v2}, nil }}
		out, err := exchangeProbe(context.Background(), spec, nil)
		if err != nil {
			require.NotContains(t, err.Error(), "\n")
			return
		}
		require.Len(t, out.blocked, n)
		want := make([]bool, n)
		for i, p := range out.pairs {
			require.True(t, 0 <= p[0] && p[0] < p[1] && p[1] < n, "%v", p)
			if i > 0 {
				prev := out.pairs[i-1]
				require.True(t, prev[0] < p[0] || prev[0] == p[0] && prev[1] < p[1], "%v then %v", prev, p)
			}
			switch spec.Rank {
			case p[0]:
				want[p[1]] = true
			case p[1]:
				want[p[0]] = true
			}
		}
		require.Equal(t, want, out.blocked)
	})
}

// A MetaRoCE connect that fails for another reason than the probe's end
// (here: its listener is closed) returns that error; nothing is taken for
// blocked UDP, and the ranks do not exchange probe results.
func TestProbeOtherFailure(t *testing.T) {
	exchanged := false
	spec := transportSpec{Rank: 0, Size: 2, Host: "127.0.0.1", UDPProbe: time.Minute,
		Exchange: func(context.Context, string, []byte) ([][]byte, error) {
			exchanged = true
			return nil, nil
		}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ln, err := listenTransport(ctx, TransportMetaRoCE, spec)
	require.NoError(t, err)
	require.NoError(t, ln.(mrListener).Listener.Close())
	_, err = ln.Connect(ctx, []string{ln.Addr(), ln.Addr()})
	require.ErrorContains(t, err, "listener closed")
	require.False(t, exchanged)
}
