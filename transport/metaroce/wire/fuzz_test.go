package wire

import (
	"bytes"
	"testing"
)

// seedAll adds one valid packet of every type to f's corpus.
func seedAll(f *testing.F) {
	d := sampleData()
	f.Add(AppendData(nil, &d))
	f.Add(AppendData(nil, &Data{Flags: FlagFirst | FlagLast}))
	f.Add(AppendData(nil, &Data{Flags: FlagAnnounce | FlagUnconfirmed, Total: 1 << 30}))
	a, blocks, grants := sampleAck()
	f.Add(AppendAck(nil, &a, blocks, grants))
	d.Flags |= FlagAck
	d.AckBody = AckBody(AppendAck(nil, &a, blocks, grants))
	f.Add(AppendData(nil, &d))
	f.Add(splitDataPacket(&d))
	f.Add(AppendHello(nil, &Hello{Src: 5, Paths: 4, MaxDatagram: 9000, MsgWindow: 64}))
	f.Add(AppendHello(nil, &Hello{Ack: true, Conn: 3, Src: 5, Paths: 8, MaxDatagram: 8972, MsgWindow: 64, AckRoom: true}))
	f.Add(AppendProbe(nil, &Probe{Conn: 1, Nonce: 2}))
	f.Add(AppendClose(nil, &Close{Conn: 1}))
	f.Add([]byte{})
}

// FuzzParse feeds arbitrary bytes to every parser, as they are and with a
// valid CRC put on them (so that the field checks are reached). None may
// panic, and a packet that parses must re-encode to exactly the same bytes.
func FuzzParse(f *testing.F) {
	seedAll(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		parseAll(t, b)
		if len(b) >= CRCLen {
			parseAll(t, fixCRC(bytes.Clone(b)))
		}
	})
}

func parseAll(t *testing.T, b []byte) {
	{
		var d Data
		if ParseData(b, &d) == nil {
			requireSame(t, b, AppendData(nil, &d))
		}
		var a Ack
		if ParseAck(b, &a) == nil {
			blocks := make([]AckBlock, a.NumBlocks())
			for i := range blocks {
				a.Block(i, &blocks[i])
			}
			grants := make([]uint64, a.NumGrants())
			for i := range grants {
				grants[i] = a.Grant(i)
			}
			requireSame(t, b, AppendAck(nil, &a, blocks, grants))
		}
		var h Hello
		if ParseHello(b, &h) == nil {
			requireSame(t, b, AppendHello(nil, &h))
		}
		var p Probe
		if ParseProbe(b, &p) == nil {
			requireSame(t, b, AppendProbe(nil, &p))
		}
		var c Close
		if ParseClose(b, &c) == nil {
			requireSame(t, b, AppendClose(nil, &c))
		}
	}
}

// FuzzMutatedData flips bytes of a valid DATA packet, recomputes the CRC so
// the mutation reaches the field checks, and requires any accepted result
// to be self-consistent.
func FuzzMutatedData(f *testing.F) {
	d := sampleData()
	f.Add(AppendData(nil, &d), uint16(20), byte(0xff))
	f.Fuzz(func(t *testing.T, b []byte, at uint16, x byte) {
		if len(b) < MinPacketLen {
			return
		}
		b = bytes.Clone(b)
		b[int(at)%(len(b)-CRCLen)] ^= x
		b = fixCRC(b)
		var got Data
		if ParseData(b, &got) != nil {
			return
		}
		if got.Flags&(FlagAnnounce|FlagAbort) == 0 && got.Offset+uint64(len(got.Payload)) > got.Total {
			t.Fatalf("accepted a piece beyond its message: %+v", got)
		}
	})
}

func requireSame(t *testing.T, want, got []byte) {
	t.Helper()
	if !bytes.Equal(want, got) {
		t.Fatalf("re-encoding differs:\n in  %x\n out %x", want, got)
	}
}
