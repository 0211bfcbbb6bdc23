package metaroce

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// ackRoomTally counts, from the datagrams a testNet carries, the DATA
// packets and their payload sizes, those carrying an ACK, and the ACK
// datagrams.
type ackRoomTally struct {
	data, dataWithAck, fullWithAck, acks int
	maxPayload                           int
}

func (k *ackRoomTally) watch(n *testNet) {
	n.drop = func(_, _ int, b []byte) bool {
		h, _, err := wire.Open(b)
		if err != nil && len(b) > wire.TrailerLen {
			b = b[:len(b)-wire.TrailerLen] // an authenticated packet
			h, _, err = wire.Open(b)
		}
		if err != nil {
			return false
		}
		switch h.Type {
		case wire.TypeAck:
			k.acks++
		case wire.TypeData:
			var d wire.Data
			if wire.ParseData(b, &d) != nil {
				return false
			}
			k.data++
			k.maxPayload = max(k.maxPayload, len(d.Payload))
			if d.Flags&wire.FlagAck != 0 {
				k.dataWithAck++
				if len(d.Payload) == k.maxPayload {
					k.fullWithAck++
				}
			}
		}
		return false
	}
}

// exchange sends size bytes each way at once over a fresh connection of
// n and checks both messages arrive whole.
func (n *testNet) exchange(size int) {
	n.t.Helper()
	a, b := n.connect()
	in0, in1 := make([]byte, size), make([]byte, size)
	require.NoError(n.t, n.eps[0].PostRecv(n.now, a, 1, 2, in0))
	require.NoError(n.t, n.eps[1].PostRecv(n.now, b, 1, 1, in1))
	require.NoError(n.t, n.eps[0].Send(n.now, a, 1, 1, pattern(size, 1)))
	require.NoError(n.t, n.eps[1].Send(n.now, b, 1, 2, pattern(size, 2)))
	n.runUntil(func() bool {
		_, r0 := n.done(0, EventRecvDone, 1, 2)
		_, r1 := n.done(1, EventRecvDone, 1, 1)
		_, s0 := n.done(0, EventSendDone, 1, 1)
		_, s1 := n.done(1, EventSendDone, 1, 2)
		return r0 && r1 && s0 && s1
	}, 10*time.Second)
	require.Equal(n.t, pattern(size, 2), in0)
	require.Equal(n.t, pattern(size, 1), in1)
}

// With AckRoom on both sides, a connection's pieces leave wire.AckRoomLen
// bytes of the datagram free, and on a long connection with DATA both
// ways the ACKs ride on full pieces, gathered (PollTransmitVec) and
// placed (Placement) as a driver does, instead of going alone: fewer ACK
// datagrams than without it. Without AckRoom no full piece carries one.
// Also with AuthHeader, whose tag covers the ACK in a gathered DATA's tail.
func TestAckRoomCarriesAcksOnFullPieces(t *testing.T) {
	const datagram, size = 8972, 4 << 20
	for _, keyed := range []bool{false, true} {
		run := func(room bool) ackRoomTally {
			cfg := Config{Paths: 4, MaxDatagram: datagram, PiggybackAcks: true, AckRoom: room}
			full := datagram - wire.DataOverhead - wire.AckRoomLen
			if keyed {
				cfg.Auth = AuthConfig{Key: testKey(t, "test-key-0123456789abcdef"), Mode: AuthHeader}
				full -= wire.TrailerLen
			}
			n := newAuthNet(t, [2]Config{cfg, cfg})
			n.delay = 2 * time.Millisecond // a long connection: ACKs are held (ackhold.go)
			n.gather, n.place = full, true
			var k ackRoomTally
			k.watch(n)
			n.exchange(size)
			require.Positive(t, n.gathered)
			require.Positive(t, n.placed)
			for i, ep := range n.eps {
				st := ep.Stats()
				require.Zero(t, st.DropAuth+st.DropReplay+st.DropChecksum+st.DropMalformed, "endpoint %d: %+v", i, st)
			}
			return k
		}
		with, without := run(true), run(false)
		t.Logf("keyed %v: with AckRoom: %+v; without: %+v", keyed, with, without)
		full := datagram - wire.DataOverhead
		if keyed {
			full -= wire.TrailerLen
		}
		require.Equal(t, full-wire.AckRoomLen, with.maxPayload)
		require.Equal(t, full, without.maxPayload)
		require.Zero(t, without.fullWithAck)
		require.Greater(t, with.fullWithAck, with.data/10, "full pieces carrying an ACK")
		require.Less(t, with.acks, without.acks, "ACK datagrams")
	}
}

// AckRoom takes effect only where both sides ask and the connection's
// datagram is at least wire.AckRoomMinDatagram; otherwise the pieces fill
// the datagram, and either way the transfer is exact.
func TestAckRoomNegotiated(t *testing.T) {
	for _, tc := range []struct {
		name               string
		room0, room1       bool
		datagram0, datagr1 int
		want               int // the largest payload
	}{
		{"both", true, true, 8972, 8972, 8972 - wire.DataOverhead - wire.AckRoomLen},
		{"initiator only", true, false, 8972, 8972, 8972 - wire.DataOverhead},
		{"acceptor only", false, true, 8972, 8972, 8972 - wire.DataOverhead},
		{"small datagram", true, true, 8972, wire.AckRoomMinDatagram - 1, wire.AckRoomMinDatagram - 1 - wire.DataOverhead},
		{"smallest datagram", true, true, wire.AckRoomMinDatagram, 8972, wire.AckRoomMinDatagram - wire.DataOverhead - wire.AckRoomLen},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newTestNet(t, Config{Paths: 2, MaxDatagram: tc.datagram0, PiggybackAcks: true, AckRoom: tc.room0})
			ep, err := NewEndpoint(Config{NodeID: 1, IDSeed: 101, Paths: 2, MaxDatagram: tc.datagr1, PiggybackAcks: true, AckRoom: tc.room1})
			require.NoError(t, err)
			n.eps[1] = ep
			var k ackRoomTally
			k.watch(n)
			n.exchange(256 << 10)
			require.Equal(t, tc.want, k.maxPayload)
		})
	}
}
