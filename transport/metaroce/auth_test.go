package metaroce

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/internal/jobkey"
	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

func testKey(t *testing.T, text string) jobkey.Key {
	t.Helper()
	k, err := jobkey.Parse(text)
	require.NoError(t, err)
	return k
}

// newAuthNet is newTestNet with endpoint i configured by cfgs[i].
func newAuthNet(t *testing.T, cfgs [2]Config) *testNet {
	n := newTestNet(t, Config{})
	for i := range n.eps {
		c := cfgs[i]
		c.NodeID, c.IDSeed = uint64(i), uint64(100+i)
		ep, err := NewEndpoint(c)
		require.NoError(t, err)
		n.eps[i] = ep
	}
	return n
}

// exchange sends one message of each size each way, on streams round*2
// and round*2+1, and checks every byte.
func exchange(t *testing.T, n *testNet, a, b ConnID, round uint64, sizes []int) {
	t.Helper()
	ids := [2]ConnID{a, b}
	var bufs [][]byte
	var wants [][]byte
	for k, size := range sizes {
		for from := range 2 {
			msg := pattern(size, byte(k*2+from))
			buf := make([]byte, size)
			require.NoError(t, n.eps[1-from].PostRecv(n.now, ids[1-from], round*2+uint64(from), uint64(k), buf))
			require.NoError(t, n.eps[from].Send(n.now, ids[from], round*2+uint64(from), uint64(k), msg))
			bufs, wants = append(bufs, buf), append(wants, msg)
		}
	}
	n.runUntil(func() bool {
		for k := range sizes {
			for from := range 2 {
				if _, ok := n.done(1-from, EventRecvDone, round*2+uint64(from), uint64(k)); !ok {
					return false
				}
			}
		}
		return true
	}, 5*time.Second)
	for k := range sizes {
		for from := range 2 {
			ev, _ := n.done(1-from, EventRecvDone, round*2+uint64(from), uint64(k))
			require.NoError(t, ev.Err)
			require.Equal(t, sizes[k], ev.N)
		}
	}
	for i := range bufs {
		require.True(t, bytes.Equal(wants[i], bufs[i]), "message %d differs", i)
	}
}

var authSizes = []int{0, 1, 100, 1380, 1400, 5000, 200_000}

// Every mode, with gathered writes and placed reads, delivers every byte,
// and the packets carry the trailer (and, encrypted, no clear payload).
func TestAuthModesDeliver(t *testing.T) {
	key := testKey(t, "test-key-0123456789abcdef")
	for _, mode := range []AuthMode{AuthHeader, AuthFull, AuthEncrypt} {
		for _, io := range []string{"plain", "gather", "place"} {
			t.Run(fmt.Sprintf("%v/%s", mode, io), func(t *testing.T) {
				cfg := Config{Auth: AuthConfig{Key: key, Mode: mode}, PiggybackAcks: true}
				n := newAuthNet(t, [2]Config{cfg, cfg})
				n.gather, n.place = map[string]int{"gather": 512}[io], io == "place"
				clear := 0
				n.drop = func(from, path int, b []byte) bool {
					if bytes.Contains(b, pattern(200_000, 12)[5000:5064]) {
						clear++
					}
					return false
				}
				a, b := n.connect()
				exchange(t, n, a, b, 0, authSizes)
				for i, ep := range n.eps {
					st := ep.Stats()
					require.Zero(t, st.DropAuth+st.DropReplay+st.DropChecksum+st.DropMalformed, "endpoint %d: %+v", i, st)
				}
				if mode == AuthEncrypt {
					require.Zero(t, clear, "payload bytes in clear on the wire")
				} else {
					require.Positive(t, clear, "the test's payload probe saw nothing")
				}
				if io == "gather" && mode == AuthHeader {
					require.Positive(t, n.gathered)
				}
				if io == "place" && mode == AuthHeader {
					require.Positive(t, n.placed)
				}
				if mode != AuthHeader {
					require.Zero(t, n.gathered+n.placed, "a payload the tag must cover went around the buffer")
				}
			})
		}
	}
}

// A connection uses the higher of its sides' modes.
func TestAuthModeNegotiated(t *testing.T) {
	key := testKey(t, "test-key-0123456789abcdef")
	enc := Config{Auth: AuthConfig{Key: key, PeerMode: func(peer uint64) AuthMode {
		if peer == 0 {
			return AuthEncrypt
		}
		return AuthHeader
	}}}
	n := newAuthNet(t, [2]Config{{Auth: AuthConfig{Key: key}}, enc})
	a, b := n.connect()
	require.Equal(t, AuthEncrypt, n.eps[0].conns[a].auth.mode)
	require.Equal(t, AuthEncrypt, n.eps[1].conns[b].auth.mode)
	exchange(t, n, a, b, 0, []int{10, 100_000})
}

// A HELLO with another key, or none, is refused at once with a one-line
// error naming the peer; a HELLO with a key at an endpoint without one too.
func TestAuthHandshakeRefused(t *testing.T) {
	good := Config{Auth: AuthConfig{Key: testKey(t, "test-key-0123456789abcdef")}}
	bad := Config{Auth: AuthConfig{Key: testKey(t, "another-key-0123456789abcdef")}}
	for _, tc := range []struct {
		name      string
		initiator Config
		acceptor  Config
		want      string
	}{
		{"wrong key", bad, good, "peer 1 refused this endpoint's job key"},
		{"no key", Config{}, good, "peer 1 requires a job key and this endpoint has none"},
		{"key at a keyless peer", good, Config{}, "peer 1 refused this endpoint's job key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newAuthNet(t, [2]Config{tc.initiator, tc.acceptor})
			_, err := n.eps[0].Connect(n.now, 1)
			require.NoError(t, err)
			n.runUntil(func() bool { return n.has(0, EventClosed) }, time.Second)
			require.Less(t, n.now, 100*time.Millisecond, "refused only at a timeout")
			ev := n.events[0][len(n.events[0])-1]
			require.ErrorIs(t, ev.Err, ErrAuth)
			require.Contains(t, ev.Err.Error(), tc.want)
			require.NotContains(t, ev.Err.Error(), "\n")
			require.False(t, n.has(1, EventAccepted), "the acceptor accepted a stranger")
			require.Positive(t, n.eps[1].Stats().DropAuth)
		})
	}
}

// A HELLO-ACK whose proof does not verify (a forged one) is dropped and
// counted; the connection fails with ErrAuth at its idle timeout, unless
// the real answer arrives.
func TestAuthForgedHelloAck(t *testing.T) {
	key := testKey(t, "test-key-0123456789abcdef")
	cfg := Config{Auth: AuthConfig{Key: key}, IdleTimeout: 50 * time.Millisecond}
	n := newAuthNet(t, [2]Config{cfg, cfg})
	n.drop = func(from, path int, b []byte) bool {
		if from == 1 && wire.Type(b[1]) == wire.TypeHelloAck {
			forged := append([]byte(nil), b...)
			forged[len(forged)-wire.CRCLen-1] ^= 1 // the proof's last byte
			forged = forged[:len(forged)-wire.CRCLen]
			forged = append(forged, 0, 0, 0, 0)
			fixCRC(forged)
			n.eps[0].HandleDatagram(n.now, path, false, forged)
			return true
		}
		return false
	}
	_, err := n.eps[0].Connect(n.now, 1)
	require.NoError(t, err)
	n.runUntil(func() bool { return n.has(0, EventClosed) }, time.Second)
	ev := n.events[0][len(n.events[0])-1]
	require.ErrorIs(t, ev.Err, ErrAuth)
	require.Contains(t, ev.Err.Error(), "proof of another job key")
	require.False(t, n.has(0, EventConnected))
	require.Positive(t, n.eps[0].Stats().DropAuth)
}

// fixCRC rewrites the CRC32C at the end of packet b.
func fixCRC(b []byte) {
	n := len(b) - wire.CRCLen
	binary.BigEndian.PutUint32(b[n:], crc32.Checksum(b[:n], crc32.MakeTable(crc32.Castagnoli)))
}

// Injected packets on a running connection: a forged tag, a changed
// header, a replay, a packet without trailer and one from long ago are
// dropped and counted, and every message arrives exact.
func TestAuthInjectionDropped(t *testing.T) {
	key := testKey(t, "test-key-0123456789abcdef")
	for _, mode := range []AuthMode{AuthHeader, AuthFull, AuthEncrypt} {
		t.Run(mode.String(), func(t *testing.T) {
			cfg := Config{Auth: AuthConfig{Key: key, Mode: mode}}
			n := newAuthNet(t, [2]Config{cfg, cfg})
			a, b := n.connect()
			var kept [][]byte
			var paths []int
			n.drop = func(from, path int, d []byte) bool {
				if from == 0 && len(kept) < 400 {
					kept, paths = append(kept, append([]byte(nil), d...)), append(paths, path)
				}
				return false
			}
			exchange(t, n, a, b, 0, []int{3000, 300_000})
			n.drop = nil
			n.runFor(time.Millisecond) // nothing in flight: every kept packet arrived
			require.GreaterOrEqual(t, len(kept), 100)
			before := n.eps[1].Stats()
			inject := func(i int, change func([]byte) []byte) {
				d := change(append([]byte(nil), kept[i]...))
				n.eps[1].HandleDatagram(n.now, paths[i], false, d)
			}
			last := len(kept) - 1
			fresh := func(d []byte) { d[len(d)-4]++ }        // a packet number never used: the tag is checked
			inject(last, func(d []byte) []byte { return d }) // replayed
			inject(0, func(d []byte) []byte { return d })    // replayed, from long before
			mid := n.eps[1].Stats()
			inject(last, func(d []byte) []byte { fresh(d); return d })
			inject(last, func(d []byte) []byte { fresh(d); d[len(d)-wire.PNLen-1] ^= 1; return d })
			inject(last, func(d []byte) []byte { fresh(d); d[wire.HeaderLen+3] ^= 1; return d })
			forged := n.eps[1].Stats()
			inject(last, func(d []byte) []byte { return d[:len(d)-wire.TrailerLen] })
			after := n.eps[1].Stats()
			require.Equal(t, int64(2), mid.DropReplay-before.DropReplay, "%+v", mid)
			require.Equal(t, before.DropAuth, mid.DropAuth, "%+v", mid)
			require.Equal(t, int64(3), forged.DropAuth-mid.DropAuth, "%+v", forged)
			require.Equal(t, mid.DropReplay, forged.DropReplay, "%+v", forged)
			require.Equal(t, int64(1), after.DropAuth+after.DropReplay-forged.DropAuth-forged.DropReplay, "%+v", after)
			require.Equal(t, before.DropChecksum+before.DropMalformed, after.DropChecksum+after.DropMalformed, "%+v", after)
			exchange(t, n, a, b, 1, []int{3000, 300_000})
		})
	}
}

func TestReplayWindow(t *testing.T) {
	var w replayWin
	accept := func(pn uint64) bool {
		if !w.fresh(pn) {
			return false
		}
		w.mark(pn)
		return true
	}
	require.False(t, accept(0))
	for pn := uint64(1); pn <= 10; pn++ {
		require.True(t, accept(pn))
	}
	require.False(t, accept(5))
	require.True(t, accept(20))
	require.True(t, accept(15), "a late packet within the window")
	require.False(t, accept(15))
	require.True(t, accept(20+replayWindow-1))
	require.False(t, accept(20), "at the window's edge")
	require.True(t, accept(21))
	require.True(t, accept(10*replayWindow))
	require.False(t, accept(10*replayWindow))
	require.True(t, accept(10*replayWindow-5))
	require.False(t, accept(10*replayWindow-replayWindow))
	// Every number once, whatever the order within the window.
	var w2 replayWin
	seen := map[uint64]bool{}
	for i := 1; i < 20000; i++ {
		pn := uint64(i) + uint64((i*7919)%1000)
		ok := w2.fresh(pn)
		if ok {
			w2.mark(pn)
		}
		require.Equal(t, !seen[pn], ok, "pn %d", pn)
		seen[pn] = true
	}
}

func TestAuthConfig(t *testing.T) {
	_, err := NewEndpoint(Config{Auth: AuthConfig{Mode: AuthFull}})
	require.ErrorIs(t, err, ErrConfig)
	_, err = NewEndpoint(Config{Auth: AuthConfig{Key: testKey(t, "test-key-0123456789abcdef"), Mode: 9}})
	require.ErrorIs(t, err, ErrConfig)
	ep, err := NewEndpoint(Config{Auth: AuthConfig{Key: testKey(t, "test-key-0123456789abcdef")}})
	require.NoError(t, err)
	require.Equal(t, AuthHeader, ep.Config().Auth.Mode)
	require.False(t, strings.Contains(fmt.Sprintf("%+v", ep.Config()), "test-key"), "the key printed")
	_, err = ep.Connect(0, 1)
	require.NoError(t, err)
	e2, err := NewEndpoint(Config{Auth: AuthConfig{Key: testKey(t, "test-key-0123456789abcdef"), Rand: failingReader{}}})
	require.NoError(t, err)
	_, err = e2.Connect(0, 1)
	require.Error(t, err)
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("no entropy") }

// FuzzAuthEndpointInput is FuzzEndpointInput on authenticated
// connections (mode's bits 4-5 pick header, full or encrypt): junk and
// mutated copies of the peer's packets, CRC recomputed or not, never
// panic, and since no mutation can make a valid tag, the message always
// arrives intact.
func FuzzAuthEndpointInput(f *testing.F) {
	f.Add([]byte{1, 3, 0, 0}, uint8(0), uint16(0))
	f.Add([]byte("\x02\x03\x00\x01garbage"), uint8(0x13), uint16(30))
	f.Add(bytes.Repeat([]byte{0xff}, 80), uint8(0x22), uint16(12))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9}, uint8(0x03), uint16(45))
	f.Add(bytes.Repeat([]byte{0}, 30), uint8(0x10), uint16(3))
	key, err := jobkey.Parse("fuzz-key-0123456789abcdef")
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, junk []byte, mode uint8, pos uint16) {
		auth := AuthMode(1 + mode>>4%3)
		cfg := Config{Paths: 2, UnexpectedBytes: 32 << 10, Auth: AuthConfig{Key: key, Mode: auth}}
		n := newAuthNet(t, [2]Config{cfg, cfg})
		a, b := n.connect()
		want := pattern(20000, 9)
		buf := make([]byte, len(want)+16)
		require.NoError(t, n.eps[1].PostRecv(n.now, b, 1, 1, buf))
		require.NoError(t, n.eps[0].Send(n.now, a, 1, 1, want))
		seen := 0
		n.drop = func(from, path int, pkt []byte) bool {
			if from != 0 {
				return false
			}
			seen++
			if seen == int(pos%8)+1 {
				n.eps[1].HandleDatagram(n.now, int(mode>>2)%3, mode&1 != 0, bytes.Clone(junk))
				n.eps[1].HandleDatagram(n.now, path, false, mutate(pkt, junk, int(pos), mode&2 != 0))
			}
			return false
		}
		n.runFor(20 * time.Millisecond)
		for i := len(want); i < len(buf); i++ {
			require.Zero(t, buf[i], "wrote past the message")
		}
		ev, ok := n.done(1, EventRecvDone, 1, 1)
		require.True(t, ok, "message did not arrive")
		require.NoError(t, ev.Err)
		require.Equal(t, want, buf[:len(want)])
	})
}
