package mrtransport

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/transporttest"
)

// TestUnexpectedStormLoopback is bench/rss.sh's storm at small scale over
// loopback: ranks 1-3 each post more messages to rank 0 than its message
// window and unexpected budget hold (a small header and 16 KiB of data
// per pair, as the collective layer sends them), and rank 0 posts no
// receive for three PeerTimeouts. The senders, blocked on rank 0, must
// still hear it answer (no false peer timeout); then rank 0 takes every
// message, intact.
func TestUnexpectedStormLoopback(t *testing.T) {
	const senders, pairs, size = 3, 300, 16 << 10
	peerTimeout := 500 * time.Millisecond
	eps := newTestWorld(t, senders+1, Config{Core: metaroce.Config{MsgWindow: 64, UnexpectedBytes: 128 << 10,
		MaxSends: 2 * pairs, MaxRecvs: 2 * pairs, PeerTimeout: peerTimeout}})
	ctx := testCtx(t)
	tag := func(m int) transport.Tag { return transport.Tag{OpKey: transport.OpKey{Comm: 9, Op: uint64(m)}} }
	var sends []transport.Request
	for i := 1; i <= senders; i++ {
		for m := range pairs {
			sends = append(sends, eps[i].Send(0, tag(2*m), transporttest.Pattern(64, uint64(i))),
				eps[i].Send(0, tag(2*m+1), transporttest.Pattern(size, uint64(i*1000+m))))
		}
	}
	// No sleep as synchronisation: the hold is the load itself (rank 0
	// receives nothing meanwhile), and what is checked is that no request
	// failed during it.
	time.Sleep(3 * peerTimeout)
	for _, s := range sends {
		select {
		case <-s.Done():
			_, err := s.Wait(ctx)
			require.NoError(t, err, "a send failed while rank 0 held its receives")
		default:
		}
	}
	for m := range pairs {
		for i := 1; i <= senders; i++ {
			small := make([]byte, 64)
			big := make([]byte, size)
			_, err := eps[0].Recv(i, tag(2*m), small).Wait(ctx)
			require.NoError(t, err, "rank %d message %d", i, 2*m)
			_, err = eps[0].Recv(i, tag(2*m+1), big).Wait(ctx)
			require.NoError(t, err, "rank %d message %d", i, 2*m+1)
			require.NoError(t, transporttest.Verify(small, uint64(i)))
			require.NoError(t, transporttest.Verify(big, uint64(i*1000+m)))
		}
	}
	for _, s := range sends {
		_, err := s.Wait(ctx)
		require.NoError(t, err)
	}
}

// TestStormCollectiveLoopback is bench/rss.sh's storm through the
// collective layer: rank 1 posts 2100 sends of 16 KiB to rank 0 at once
// (each is a header and a data message), rank 0 posts nothing for a
// while, then receives them one by one. While rank 0's unexpected budget
// is full of later messages, each of its receives waits for a round trip
// of goroutine wake-ups, which CPU-bound neighbours stretch to tens of
// ms; and the 2100 goroutines waiting for rank 0's headers must not keep
// the engines from running (spinadmit.go: beside three busy loops, main's
// runs took 13-65 s, and one failed in 4.6 s with a false peer timeout).
// So what is bounded is progress: a receive within 30 s of the last
// (transporttest.WatchProgress), and the whole within six testWaits (120
// s, 360 s under -race).
func TestStormCollectiveLoopback(t *testing.T) {
	const count, size = 2100, 16 << 10
	eps := newTestWorld(t, 2, Config{})
	comms := newComms(t, eps)
	bounded, cancelBound := context.WithTimeout(context.Background(), 6*testWait)
	defer cancelBound()
	ctx, cancel := context.WithCancelCause(bounded)
	defer cancel(nil)
	var received atomic.Int64
	stop := make(chan struct{})
	defer close(stop)
	go transporttest.WatchProgress(&received, cancel, stop)
	buf := make([]byte, size)
	hs := make([]*collective.Handle, 0, count)
	for range count {
		hs = append(hs, collective.SendAsync(ctx, comms[1], buf, 0))
	}
	time.Sleep(time.Second) // the load: nothing received meanwhile
	got := make([]byte, size)
	for i := range count {
		require.NoError(t, collective.Recv(ctx, comms[0], got, 1), "receive %d (%v)", i, context.Cause(ctx))
		received.Add(1)
	}
	for _, h := range hs {
		require.NoError(t, h.Wait(ctx))
	}
}

// TestReceiveOrderBeyondWindow posts more sends to one peer than the
// core's default message window (4096) and has the peer wait first for
// the last of them, then take the others. The collective layer's sends
// reach the transport in any order (each asynchronous operation is a
// goroutine), so a receiver may well want first a message its sender
// queued behind thousands of others. With a message window smaller than
// the messages a sender may queue, the sender starts only the first
// window's worth, which finish only once received: the wanted message
// never starts (what bench/rss.sh's storm over MetaRoCE ran into).
func TestReceiveOrderBeyondWindow(t *testing.T) {
	const count, size = 4200, 16 << 10
	eps := newTestWorld(t, 2, Config{})
	ctx := testCtx(t)
	tag := func(m int) transport.Tag { return transport.Tag{OpKey: transport.OpKey{Comm: 9, Op: uint64(m)}} }
	sends := make([]transport.Request, count)
	for m := range count {
		sends[m] = eps[1].Send(0, tag(m), transporttest.Pattern(size, uint64(m)))
	}
	got := make([][]byte, count)
	for m := range got {
		got[m] = make([]byte, size)
	}
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	_, err := eps[0].Recv(1, tag(count-1), got[count-1]).Wait(wait)
	cancel()
	require.NoError(t, err, "the last of %d messages, received first", count)
	recvs := make([]transport.Request, count-1)
	for m := range count - 1 {
		recvs[m] = eps[0].Recv(1, tag(m), got[m])
	}
	for m, r := range recvs {
		_, err := r.Wait(ctx)
		require.NoError(t, err, "message %d", m)
	}
	for m := range got {
		require.NoError(t, transporttest.Verify(got[m], uint64(m)), "message %d", m)
	}
	for _, s := range sends {
		_, err := s.Wait(ctx)
		require.NoError(t, err)
	}
}
