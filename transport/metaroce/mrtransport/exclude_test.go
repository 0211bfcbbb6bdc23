package mrtransport

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport"
)

// blockList is the set of destination addresses that blockingSockets
// drop datagrams to: UDP blocked between two ranks.
type blockList struct {
	mu      sync.Mutex
	blocked map[netip.AddrPort]bool
}

func (b *blockList) block(addrs ...PeerAddr) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, a := range addrs {
		for _, p := range a.Paths {
			b.blocked[p] = true
		}
	}
}

// blockingSocket drops every datagram written to a blocked address.
type blockingSocket struct {
	PathSocket
	list *blockList
	out  []Message
}

func (s *blockingSocket) WriteBatch(ms []Message) (int, error) {
	s.list.mu.Lock()
	out := s.out[:0]
	for _, m := range ms {
		if !s.list.blocked[m.Addr] {
			out = append(out, m)
		}
	}
	s.list.mu.Unlock()
	s.out = out[:0]
	if len(out) == 0 {
		return len(ms), nil
	}
	if _, err := s.PathSocket.WriteBatch(out); err != nil {
		return 0, err
	}
	return len(ms), nil
}

// UDP between ranks 1 and 2 of 3 is blocked: a probing Connect on each
// names the other as unconnected, ConnectExcept then connects the rest, and
// requests between 1 and 2 fail at once with ErrExcluded while the others
// work.
func TestConnectExcept(t *testing.T) {
	const n = 3
	blocks := make([]*blockList, n)
	listeners := make([]*Listener, n)
	addrs := make([]PeerAddr, n)
	for r := range n {
		blocks[r] = &blockList{blocked: map[netip.AddrPort]bool{}}
		open := func(_ int, addr netip.AddrPort) (PathSocket, error) {
			s, err := OpenUDP(addr, DefaultSocketBuffer)
			if err != nil {
				return nil, err
			}
			return &blockingSocket{PathSocket: s, list: blocks[r]}, nil
		}
		l, err := Listen(context.Background(), Config{Rank: r, Size: n, Paths: 2, OpenSocket: open})
		require.NoError(t, err)
		listeners[r], addrs[r] = l, l.Addr()
	}
	blocks[1].block(addrs[2])
	blocks[2].block(addrs[1])

	eps := make([]*Endpoint, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r, l := range listeners {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
			defer cancel()
			eps[r], errs[r] = l.Connect(ctx, addrs)
		})
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.Error(t, errs[1])
	require.Error(t, errs[2])
	require.Equal(t, []int{2}, listeners[1].Unconnected())
	require.Equal(t, []int{1}, listeners[2].Unconnected())
	for r := 1; r < n; r++ {
		except := make([]bool, n)
		except[3-r] = true
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), testWait)
			defer cancel()
			eps[r], errs[r] = listeners[r].ConnectExcept(ctx, addrs, except)
		})
	}
	wg.Wait()
	for r := range n {
		require.NoError(t, errs[r], "rank %d", r)
		defer eps[r].Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	tag := transport.Tag{OpKey: transport.OpKey{Comm: 9, Op: 1}}
	for _, pair := range [][2]int{{0, 1}, {0, 2}, {2, 0}} {
		buf := make([]byte, 3)
		recv := eps[pair[1]].Recv(pair[0], tag, buf)
		_, err := eps[pair[0]].Send(pair[1], tag, []byte("abc")).Wait(ctx)
		require.NoError(t, err, "%d to %d", pair[0], pair[1])
		_, err = recv.Wait(ctx)
		require.NoError(t, err, "%d from %d", pair[1], pair[0])
		require.Equal(t, "abc", string(buf))
	}
	_, err := eps[1].Send(2, tag, []byte("x")).Wait(ctx)
	require.True(t, errors.Is(err, ErrExcluded), "%v", err)
	_, err = eps[2].Recv(1, tag, make([]byte, 1)).Wait(ctx)
	require.True(t, errors.Is(err, ErrExcluded), "%v", err)
}
