package mrtransport

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/internal/jobkey"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

func authKey(t testing.TB, text string) jobkey.Key {
	t.Helper()
	k, err := jobkey.Parse(text)
	require.NoError(t, err)
	return k
}

// recorder keeps copies of the first datagrams a world's sockets write,
// with the path each left on.
type recorder struct {
	mu    sync.Mutex
	max   int
	dgs   [][]byte
	paths []int
}

type recordingSocket struct {
	PathSocket
	path int
	r    *recorder
}

func (s *recordingSocket) WriteBatch(ms []Message) (int, error) {
	s.r.mu.Lock()
	for _, m := range ms {
		if len(s.r.dgs) < s.r.max {
			s.r.dgs = append(s.r.dgs, append([]byte(nil), m.Buf[:m.N]...))
			s.r.paths = append(s.r.paths, s.path)
		}
	}
	s.r.mu.Unlock()
	return s.PathSocket.WriteBatch(ms)
}

func (r *recorder) opener() SocketOpener {
	return func(path int, addr netip.AddrPort) (PathSocket, error) {
		s, err := OpenUDP(addr, DefaultSocketBuffer)
		if err != nil {
			return nil, err
		}
		return &recordingSocket{PathSocket: s, path: path, r: r}, nil
	}
}

// authWorld is a world of size ranks with the job key; rank 0's sockets
// record what they write into rec (if not nil).
func authWorld(t *testing.T, size int, core metaroce.Config, rec *recorder) []*Endpoint {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	listeners := make([]*Listener, size)
	addrs := make([]PeerAddr, size)
	for r := range size {
		cfg := Config{Rank: r, Size: size, Paths: 4, Core: core}
		if r == 0 && rec != nil {
			cfg.OpenSocket = rec.opener()
		}
		l, err := Listen(ctx, cfg)
		require.NoError(t, err)
		listeners[r], addrs[r] = l, l.Addr()
	}
	eps := connectListeners(t, ctx, listeners, addrs)
	t.Cleanup(func() {
		for _, ep := range eps {
			require.NoError(t, ep.Close())
		}
	})
	return eps
}

// TestAuthInjectedDatagrams replays rank 0's real datagrams at rank 1,
// and sends forged ones (a fresh packet number, a changed header, a
// changed tag) from another socket, while the ranks run AllReduces: every
// one is dropped and counted, and the results stay exact.
func TestAuthInjectedDatagrams(t *testing.T) {
	for _, mode := range []metaroce.AuthMode{metaroce.AuthHeader, metaroce.AuthEncrypt} {
		t.Run(mode.String(), func(t *testing.T) {
			rec := &recorder{max: 300}
			eps := authWorld(t, 3, metaroce.Config{Auth: metaroce.AuthConfig{Key: authKey(t, "test-key-0123456789abcdef"), Mode: mode}}, rec)
			comms := newComms(t, eps)
			allReduceSum(t, comms, 100000)

			rec.mu.Lock()
			var toRank1 [][]byte
			var paths []int
			for i, d := range rec.dgs {
				if h, err := wire.PeekHeader(d); err == nil && h.Type != wire.TypeHello && h.Type != wire.TypeHelloAck &&
					isTo(eps[1], d) {
					toRank1, paths = append(toRank1, d), append(paths, rec.paths[i])
				}
			}
			rec.mu.Unlock()
			require.GreaterOrEqual(t, len(toRank1), 20, "rank 0 sent rank 1 too little to replay")

			conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			require.NoError(t, err)
			defer conn.Close()
			before := eps[1].Stats().Core
			replays, forged := 0, 0
			done := make(chan struct{})
			go func() {
				defer close(done)
				for i, d := range toRank1 {
					to := eps[1].Addr().Paths[paths[i]]
					if _, err := conn.WriteToUDPAddrPort(d, to); err == nil {
						replays++
					}
					for k, change := range []func([]byte){
						func(b []byte) {}, // a fresh number only
						func(b []byte) { b[len(b)-wire.PNLen-1] ^= 0x40 },      // and a changed tag
						func(b []byte) { b[2] ^= 0x04 },                        // and a changed header
						func(b []byte) { b[len(b)-wire.TrailerLen-1] ^= 0x10 }, // and a changed CRC
					} {
						f := append([]byte(nil), d...)
						f[len(f)-5] += byte(1 + k) // packet number + (1+k)<<32: never sent
						change(f)
						if _, err := conn.WriteToUDPAddrPort(f, to); err == nil {
							forged++
						}
					}
					time.Sleep(20 * time.Microsecond) // within the socket buffer
				}
			}()
			for _, count := range []int{1, 1000, 100000} {
				allReduceSum(t, comms, count)
			}
			<-done
			require.Eventually(t, func() bool {
				s := eps[1].Stats().Core
				return s.DropReplay-before.DropReplay >= int64(replays) && s.DropAuth-before.DropAuth >= int64(forged)
			}, 10*time.Second, 10*time.Millisecond, "replayed and forged datagrams dropped and counted")
			allReduceSum(t, comms, 4097)
			s := eps[1].Stats().Core
			t.Logf("replayed %d, forged %d; rank 1 drops: replay %d, auth %d", replays, forged, s.DropReplay-before.DropReplay, s.DropAuth-before.DropAuth)
			require.Equal(t, int64(replays), s.DropReplay-before.DropReplay)
			require.Equal(t, int64(forged), s.DropAuth-before.DropAuth)
			ts := transport.StatsOf(eps[1])
			require.Equal(t, s.DropAuth, ts.AuthDropped)
			require.Equal(t, s.DropReplay, ts.Replayed)
		})
	}
}

// isTo reports whether datagram d names one of ep's connections.
func isTo(ep *Endpoint, d []byte) bool {
	h, err := wire.PeekHeader(d)
	if err != nil {
		return false
	}
	ep.eng.lock()
	defer ep.eng.mu.Unlock()
	for _, id := range ep.eng.core.Conns() {
		if uint64(id) == h.Conn {
			return true
		}
	}
	return false
}

// TestAuthWrongKeyRefused: a rank with another key, or none, cannot join
// a keyed world: its connect fails in one line naming the peer that
// refused it, and the world's ranks go on unaffected.
func TestAuthWrongKeyRefused(t *testing.T) {
	core := metaroce.Config{Auth: metaroce.AuthConfig{Key: authKey(t, "test-key-0123456789abcdef")}}
	eps := authWorld(t, 2, core, nil)
	comms := newComms(t, eps)
	allReduceSum(t, comms, 1000)
	for _, tc := range []struct {
		name string
		core metaroce.Config
		want string
	}{
		{"wrong key", metaroce.Config{Auth: metaroce.AuthConfig{Key: authKey(t, "another-key-0123456789abcdef")}}, "refused this endpoint's job key"},
		{"no key", metaroce.Config{}, "requires a job key and this endpoint has none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			// A stranger claiming rank 0 of a 3-rank world dials ranks 1
			// and 2; rank 1 is the world's, rank 2 does not exist.
			l, err := Listen(ctx, Config{Rank: 0, Size: 3, Paths: 4, Core: tc.core})
			require.NoError(t, err)
			dropped := func() int64 { return eps[0].Stats().Core.DropAuth + eps[1].Stats().Core.DropAuth }
			before := dropped()
			start := time.Now()
			ep, err := l.Connect(ctx, []PeerAddr{l.Addr(), eps[1].Addr(), eps[0].Addr()})
			if ep != nil {
				ep.Close()
			}
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			require.NotContains(t, strings.TrimSpace(err.Error()), "\n")
			require.Less(t, time.Since(start), 5*time.Second, "refused only at a timeout")
			// Counted by the world's rank that refused it; Connect may fail
			// on the other's refusal before this one has counted its own.
			require.Eventually(t, func() bool { return dropped() > before }, 5*time.Second, time.Millisecond,
				"the refused HELLOs were not counted")
			t.Logf("%s: %v", tc.name, err)
			allReduceSum(t, comms, 100000)
		})
	}
}

// Refusals are polled after a HELLO only (the only datagram the core
// refuses), not after every DATA, ACK or probe.
func TestMayRefuseOnlyHellos(t *testing.T) {
	hello := &wire.Hello{Src: 5, Node: 2, Paths: 4, MaxDatagram: 1452, MsgWindow: 64}
	require.True(t, mayRefuse(wire.AppendHello(nil, hello)))
	ack := *hello
	ack.Ack = true
	require.False(t, mayRefuse(wire.AppendHello(nil, &ack)), "a HELLO-ACK")
	require.False(t, mayRefuse(wire.AppendProbe(nil, &wire.Probe{Conn: 7, Path: 1, Nonce: 3})))
	require.False(t, mayRefuse(wire.AppendClose(nil, &wire.Close{Conn: 7})))
	require.False(t, mayRefuse([]byte{wire.Version}), "too short")
	bad := wire.AppendHello(nil, hello)
	bad[0]++
	require.False(t, mayRefuse(bad), "another version")
}
