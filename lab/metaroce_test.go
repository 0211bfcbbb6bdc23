//go:build linux

package lab_test

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/lab"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/metaroce/mrtransport"
)

// mrPaths is the number of MetaRoCE paths (UDP sockets) per rank.
const mrPaths = 8

// coveringPorts returns base ports for the path sockets of ranks on hosts
// a and b (path i binds base+i on each side, and talks to the peer's path
// i) such that the lab routes some path over each link, both ways: which
// links a set of ports covers is the kernel's hash, so the test picks
// ports that cover them rather than hoping.
func coveringPorts(t *testing.T, l *lab.Lab, a, b string) (uint16, uint16) {
	t.Helper()
	ctx := context.Background()
	for x := range uint16(64) {
		pa, pb := 40000+x*mrPaths, 41000+x*mrPaths
		fwd, rev := map[lab.Path]bool{}, map[lab.Path]bool{}
		for i := range uint16(mrPaths) {
			p, err := l.Route(ctx, a, b, pa+i, pb+i, "udp")
			require.NoError(t, err)
			fwd[p] = true
			if p, err = l.Route(ctx, b, a, pb+i, pa+i, "udp"); err != nil {
				require.NoError(t, err)
			}
			rev[p] = true
		}
		if len(fwd) == l.Spec().Paths && len(rev) == l.Spec().Paths {
			return pa, pb
		}
	}
	t.Fatal("no ports of 64 tries cover every link")
	return 0, 0
}

// mrWorld connects a MetaRoCE rank in each of hosts, listening and
// connecting inside its namespace (Lab.Do).
func mrWorld(t *testing.T, ctx context.Context, l *lab.Lab, hosts []string, ports []uint16) []*mrtransport.Endpoint {
	t.Helper()
	n := len(hosts)
	addrs := make(chan struct {
		rank int
		addr mrtransport.PeerAddr
	}, n)
	peers := make([]chan []mrtransport.PeerAddr, n)
	done := make(chan error, n)
	eps := make([]*mrtransport.Endpoint, n)
	for r, h := range hosts {
		peers[r] = make(chan []mrtransport.PeerAddr, 1)
		go func() {
			done <- l.Do(h, func() error {
				node, err := l.Node(h)
				if err != nil {
					return err
				}
				ln, err := mrtransport.Listen(ctx, mrtransport.Config{Rank: r, Size: n, Paths: mrPaths,
					ListenAddr: netip.AddrPortFrom(node.Addr, ports[r])})
				if err != nil {
					addrs <- struct {
						rank int
						addr mrtransport.PeerAddr
					}{r, mrtransport.PeerAddr{}}
					return err
				}
				addrs <- struct {
					rank int
					addr mrtransport.PeerAddr
				}{r, ln.Addr()}
				ep, err := ln.Connect(ctx, <-peers[r])
				if err != nil {
					_ = ln.Close()
					return fmt.Errorf("rank %d: %w", r, err)
				}
				eps[r] = ep
				return nil
			})
		}()
	}
	all := make([]mrtransport.PeerAddr, n)
	for range n {
		a := <-addrs
		all[a.rank] = a.addr
	}
	for r := range n {
		peers[r] <- all
	}
	for range n {
		require.NoError(t, <-done)
	}
	for _, ep := range eps {
		t.Cleanup(func() { _ = ep.Close() })
	}
	return eps
}

// The CI lab test: two hosts in two sites joined by two paths, no delay.
// One MetaRoCE connection spreads its bytes over both links (the lab's
// counters show them), a silent cut of one link mid-transfer loses
// nothing (every message arrives, byte for byte), and afterwards the lab
// is gone (upLab's cleanup checks namespaces, processes and state).
func TestMetaRoCESpreadAndSilentCut(t *testing.T) {
	l := upLab(t, lab.Spec{Paths: 2, HostsPerSite: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	pa, pb := coveringPorts(t, l, "s1h1", "s2h1")
	eps := mrWorld(t, ctx, l, []string{"s1h1", "s2h1"}, []uint16{pa, pb})

	const msgs, size = 48, 1 << 20
	fill := func(i int, b []byte) {
		for j := range b {
			b[j] = byte(i*131 + j*7 + j>>11)
		}
	}
	tag := func(i int) transport.Tag { return transport.Tag{OpKey: transport.OpKey{Comm: 7, Op: uint64(i)}} }
	recvBufs := make([][]byte, msgs)
	recvs := make([]transport.Request, msgs)
	for i := range msgs {
		recvBufs[i] = make([]byte, size)
		recvs[i] = eps[1].Recv(0, tag(i), recvBufs[i])
	}
	var sends []transport.Request
	send := func(from, to int) {
		for i := from; i < to; i++ {
			b := make([]byte, size)
			fill(i, b)
			sends = append(sends, eps[0].Send(1, tag(i), b))
		}
	}
	send(0, msgs/2)
	// Mid-transfer: the first messages are in, others in flight.
	for i := range 8 {
		_, err := recvs[i].Wait(ctx)
		require.NoError(t, err, "message %d", i)
	}
	before, err := l.Stats(ctx)
	require.NoError(t, err)
	cut := l.Paths()[0]
	require.NoError(t, l.Cut(ctx, cut, true))
	send(msgs/2, msgs)

	want := make([]byte, size)
	for i := range msgs {
		n, err := recvs[i].Wait(ctx)
		require.NoError(t, err, "message %d", i)
		require.Equal(t, size, n, "message %d", i)
		fill(i, want)
		require.True(t, bytes.Equal(want, recvBufs[i]), "message %d differs", i)
	}
	for i, s := range sends {
		_, err := s.Wait(ctx)
		require.NoError(t, err, "send %d", i)
	}
	after, err := l.Stats(ctx)
	require.NoError(t, err)
	var sb bytes.Buffer
	lab.FormatStats(&sb, before)
	lab.FormatStats(&sb, after)
	t.Logf("lab counters at the cut, then at the end:\n%s", sb.String())
	for _, st := range before {
		if st.Dir == lab.Fwd {
			require.Greater(t, st.TxBytes, uint64(256<<10), "path %s carried no share of the data before the cut", st.Path)
		}
	}
	require.Equal(t, cut, after[0].Path)
	require.Equal(t, "silent", after[0].State)
	require.NotZero(t, after[0].EmuDrops, "the cut path dropped nothing: the cut came after the transfer")
	for _, p := range eps[0].Stats().Peers[0].Paths {
		t.Logf("rank 0 path: %+v", p)
	}
}
