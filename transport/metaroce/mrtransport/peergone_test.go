package mrtransport

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/transporttest"
)

// die closes ep's path sockets as the kernel does when its process is
// killed: no CLOSE goes out, and datagrams sent to them are answered by
// ICMP port unreachable.
func die(ep *Endpoint) {
	for _, s := range ep.eng.socks {
		_ = s.Close()
	}
}

// A rank waiting to receive from a rank whose process died learns it from
// the ICMP port unreachable that its next datagram there draws (a
// keepalive probe), long before the 10 s idle timeout: the receive fails
// with a PeerError wrapping metaroce.ErrPeerGone, and the other ranks
// still talk.
func TestDeadPeerFailsPendingReceive(t *testing.T) {
	linuxOnly(t, "noticing a dead peer from ICMP errors")
	eps := newTestWorld(t, 3, Config{})
	require.Equal(t, 10*time.Second, eps[0].eng.core.Config().IdleTimeout)
	tag := transport.Tag{OpKey: transport.OpKey{Comm: 7, Op: 1}}
	pending := eps[0].Recv(2, tag, make([]byte, 8))
	start := time.Now()
	die(eps[2])

	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
	defer cancel()
	_, err := pending.Wait(ctx)
	var pe *transport.PeerError
	require.ErrorAs(t, err, &pe, "not failed within 6 s")
	require.Equal(t, 2, pe.Rank)
	require.ErrorIs(t, err, metaroce.ErrPeerGone)
	t.Logf("failed after %v: %v", time.Since(start).Round(time.Millisecond), err)
	st := eps[0].Stats().Engine
	require.Positive(t, st.PortUnreachable)
	require.Positive(t, st.PeerGone)
	require.Zero(t, st.ReadErrors, "a port unreachable counted as a read error")
	require.Zero(t, st.WriteErrors, "a port unreachable counted as a write error")

	_, err = eps[0].Send(2, tag, []byte{1}).Wait(testCtx(t))
	require.ErrorIs(t, err, metaroce.ErrPeerGone, "a later request to the dead rank")
	s := eps[0].Send(1, tag, transporttest.Pattern(100, 1))
	buf := make([]byte, 100)
	_, err = eps[1].Recv(0, tag, buf).Wait(testCtx(t))
	require.NoError(t, err)
	require.NoError(t, transporttest.Verify(buf, 1))
	_, err = s.Wait(testCtx(t))
	require.NoError(t, err)
}

// A rank that closes its endpoint in the middle of a transfer ends its
// peer's requests as a close, as before ICMP errors were read: its CLOSE
// goes before its sockets close, and the port unreachables that the
// peer's datagrams draw afterwards change nothing.
func TestGracefulCloseIsNotPeerGone(t *testing.T) {
	eps := newTestWorld(t, 2, Config{})
	ctx := testCtx(t)
	tag := transport.Tag{OpKey: transport.OpKey{Comm: 7, Op: 2}}
	quiet := eps[0].Recv(1, transport.Tag{OpKey: tag.OpKey, Seq: 1}, make([]byte, 8))
	big := make([]byte, 256<<20)
	recv := eps[1].Recv(0, tag, make([]byte, len(big)))
	send := eps[0].Send(1, tag, big)
	for eps[1].Stats().Engine.BytesRead < 1<<20 {
		require.NoError(t, ctx.Err(), "the transfer did not start")
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, eps[1].Close())

	_, err := recv.Wait(ctx)
	require.ErrorIs(t, err, transport.ErrClosed)
	for _, r := range []transport.Request{send, quiet} {
		_, err := r.Wait(ctx)
		var pe *transport.PeerError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, 1, pe.Rank)
		require.ErrorIs(t, err, metaroce.ErrPeerClosed)
		require.NotErrorIs(t, err, metaroce.ErrPeerGone)
	}
	st := eps[0].Stats().Engine
	t.Logf("port unreachables after the close: %d (%d named an open connection)", st.PortUnreachable, st.PeerGone)
}
