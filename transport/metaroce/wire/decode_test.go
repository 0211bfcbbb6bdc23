package wire

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDecodeAfterOpen checks that each Decode function, given what Open
// returned, gives what its Parse function gives, and that each refuses a
// packet of another type.
func TestDecodeAfterOpen(t *testing.T) {
	d := sampleData()
	a, blocks, grants := sampleAck()
	packets := map[Type][]byte{
		TypeData:  AppendData(nil, &d),
		TypeAck:   AppendAck(nil, &a, blocks, grants),
		TypeHello: AppendHello(nil, &Hello{Src: 5, Node: 2, Paths: 4, MaxDatagram: 1452, MsgWindow: 64}),
		TypeProbe: AppendProbe(nil, &Probe{Conn: 3, Path: 1, Nonce: 9}),
		TypeClose: AppendClose(nil, &Close{Conn: 3, Code: CloseIdle}),
	}
	for typ, b := range packets {
		h, body, err := Open(b)
		require.NoError(t, err)
		require.Equal(t, typ, h.Type)
		var (
			gd, pd Data
			ga, pa Ack
			gh, ph Hello
			gp, pp Probe
			gc, pc Close
		)
		require.NoError(t, ParseData(packets[TypeData], &pd))
		require.NoError(t, ParseAck(packets[TypeAck], &pa))
		require.NoError(t, ParseHello(packets[TypeHello], &ph))
		require.NoError(t, ParseProbe(packets[TypeProbe], &pp))
		require.NoError(t, ParseClose(packets[TypeClose], &pc))
		results := map[Type]error{
			TypeData:  DecodeData(h, body, &gd),
			TypeAck:   DecodeAck(h, body, &ga),
			TypeHello: DecodeHello(h, body, &gh),
			TypeProbe: DecodeProbe(h, body, &gp),
			TypeClose: DecodeClose(h, body, &gc),
		}
		for want, err := range results {
			if want == typ {
				require.NoError(t, err, "%v", typ)
			} else {
				require.ErrorIs(t, err, ErrType, "%v decoded as %v", typ, want)
			}
		}
		switch typ {
		case TypeData:
			require.Equal(t, pd, gd)
		case TypeAck:
			require.Equal(t, pa, ga)
		case TypeHello:
			require.Equal(t, ph, gh)
		case TypeProbe:
			require.Equal(t, pp, gp)
		case TypeClose:
			require.Equal(t, pc, gc)
		}
	}
}

// AppendDataSplit's head, then the payload, then its rest (a piggybacked
// ACK body, if any, and the CRC) make the packet that AppendData makes,
// with or without an ACK and a checked payload.
func TestAppendDataSplit(t *testing.T) {
	a, blocks, grants := sampleAck()
	body := AckBody(AppendAck(nil, &a, blocks, grants))
	for _, n := range []int{0, 1, 5, 3000} {
		for _, flags := range []uint8{0, FlagAck, FlagPayloadUnchecked, FlagAck | FlagPayloadUnchecked} {
			d := sampleData()
			d.Payload = make([]byte, n)
			for i := range d.Payload {
				d.Payload[i] = byte(i * 7)
			}
			d.Total = 95 + uint64(n)
			d.Offset = d.Total - uint64(n)
			d.Flags |= flags
			if flags&FlagAck != 0 {
				d.AckBody = body
			}
			whole := AppendData([]byte{0xee}, &d)
			split := AppendDataSplit([]byte{0xee}, &d)
			head, rest := split[:1+DataHeadLen], split[1+DataHeadLen:]
			joined := append(append(append([]byte(nil), head...), d.Payload...), rest...)
			require.Equal(t, whole, joined, "payload of %d bytes, flags %#x", n, flags)
			var got Data
			require.NoError(t, ParseData(joined[1:], &got))
			require.Equal(t, d, got)
		}
	}
}

// A DATA packet with FlagAck carries an ACK body after its payload, which
// decodes as the ACK it came from; a malformed body makes the packet
// malformed.
func TestDataWithPiggybackedAck(t *testing.T) {
	a, blocks, grants := sampleAck()
	a.Conn, a.Path = sampleData().Conn, sampleData().Path
	ack := AppendAck(nil, &a, blocks, grants)
	d := sampleData()
	d.Flags |= FlagAck
	d.AckBody = AckBody(ack)
	b := AppendData(nil, &d)
	var got Data
	require.NoError(t, ParseData(b, &got))
	require.Equal(t, d, got)
	h, body, err := Open(ack)
	require.NoError(t, err)
	var want, carried Ack
	require.NoError(t, DecodeAck(h, body, &want))
	require.NoError(t, DecodeAck(Header{Type: TypeAck, Path: d.Path, Conn: d.Conn}, got.AckBody, &carried))
	require.Equal(t, want, carried)

	d.AckBody = d.AckBody[:len(d.AckBody)-1]
	require.ErrorIs(t, ParseData(AppendData(nil, &d), &got), ErrMalformed)
	d.Flags &^= FlagAck
	b = AppendData(nil, &d)
	b = append(b[:len(b)-CRCLen], 1, 2, 3, 4, 5, 6, 7, 8)
	require.ErrorIs(t, ParseData(fixCRC(b), &got), ErrMalformed, "trailing bytes without FlagAck")
}
