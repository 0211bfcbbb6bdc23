package metaroce

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
	"github.com/stretchr/testify/require"
)

// FuzzEndpointInput feeds an endpoint in the middle of a transfer with
// arbitrary datagrams and with mutated copies of the packets its peer sends.
// It must never panic. When the mutations keep the original CRC (as damage
// in the network would), the message must still arrive intact; when the
// CRC is recomputed (a forged packet), only the absence of panics and of
// writes outside the posted buffer is required.
func FuzzEndpointInput(f *testing.F) {
	f.Add([]byte{1, 3, 0, 0}, uint8(0), uint16(0))
	f.Add([]byte("\x01\x03\x00\x01garbage"), uint8(1), uint16(30))
	f.Add(bytes.Repeat([]byte{0xff}, 80), uint8(2), uint16(12))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9}, uint8(3), uint16(45))
	f.Fuzz(fuzzEndpoint)
}

func fuzzEndpoint(t *testing.T, junk []byte, mode uint8, pos uint16) {
	{
		forge := mode&2 != 0
		n := newTestNet(t, Config{Paths: 2, UnexpectedBytes: 32 << 10})
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
				n.eps[1].HandleDatagram(n.now, int(mode>>2)%3, mode&1 != 0, junk)
				n.eps[1].HandleDatagram(n.now, path, false, mutate(pkt, junk, int(pos), forge))
			}
			return false
		}
		n.runFor(20 * time.Millisecond)
		for i := len(want); i < len(buf); i++ {
			require.Zero(t, buf[i], "wrote past the message")
		}
		if forge {
			return
		}
		ev, ok := n.done(1, EventRecvDone, 1, 1)
		require.True(t, ok, "message did not arrive")
		require.NoError(t, ev.Err)
		require.Equal(t, want, buf[:len(want)])
	}
}

// mutate XORs junk into a copy of pkt at pos; forge recomputes the CRC.
func mutate(pkt, junk []byte, pos int, forge bool) []byte {
	out := bytes.Clone(pkt)
	if len(out) == 0 {
		return out
	}
	for i, x := range junk {
		out[(pos+i)%len(out)] ^= x
	}
	if forge && len(out) >= wire.MinPacketLen {
		n := len(out) - wire.CRCLen
		binary.BigEndian.PutUint32(out[n:], crc32.Checksum(out[:n], crc32.MakeTable(crc32.Castagnoli)))
	}
	return out
}
