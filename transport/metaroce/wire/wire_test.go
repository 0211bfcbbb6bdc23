package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func sampleData() Data {
	return Data{
		Conn: 0x1122334455667788, Path: 7, Flags: FlagLast | FlagRetransmit | FlagUnconfirmed,
		Seq: 42, SentAt: 1234567 * time.Nanosecond, Stream: 9, Msg: 10, MsgSeq: 11,
		Total: 100, Offset: 95, Payload: []byte("hello"),
	}
}

func sampleAck() (Ack, []AckBlock, []uint64) {
	blk := AckBlock{Path: 3, Cum: 1000, Skip: 300, Echo: 5 * time.Microsecond, Delay: 700, CE: 4}
	blk.Bitmap[0] = 0b101
	blk.Bitmap[3] = 1 << 63
	return Ack{Conn: 77, Path: 1, Rate: 12_500_000_000, Credit: 1 << 22, FinBase: 17, SentAt: 3 * time.Second},
		[]AckBlock{blk, {Path: 0, Cum: 5}}, []uint64{17, 19}
}

func TestDataRoundTrip(t *testing.T) {
	d := sampleData()
	b := AppendData(nil, &d)
	require.Len(t, b, DataOverhead+len(d.Payload))
	var got Data
	require.NoError(t, ParseData(b, &got))
	require.Equal(t, d, got)
}

func TestDataZeroLengthMessage(t *testing.T) {
	d := Data{Conn: 1, Flags: FlagFirst | FlagLast}
	var got Data
	require.NoError(t, ParseData(AppendData(nil, &d), &got))
	require.Empty(t, got.Payload)
	require.Equal(t, uint8(FlagFirst|FlagLast), got.Flags)
}

func TestDataRejectsInconsistentPieces(t *testing.T) {
	cases := map[string]func(d *Data){
		"beyond total":        func(d *Data) { d.Offset = 96 },
		"missing last flag":   func(d *Data) { d.Flags &^= FlagLast },
		"first flag mid":      func(d *Data) { d.Flags |= FlagFirst },
		"huge total":          func(d *Data) { d.Total = MaxMessageLen + 1; d.Flags &^= FlagLast },
		"announce w/ payload": func(d *Data) { d.Flags = FlagAnnounce },
		"abort count > total": func(d *Data) { d.Flags, d.Payload, d.Offset = FlagAbort, nil, 101 },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			d := sampleData()
			mutate(&d)
			var got Data
			require.ErrorIs(t, ParseData(AppendData(nil, &d), &got), ErrMalformed)
		})
	}
}

func TestDataLengthFieldMustMatch(t *testing.T) {
	d := sampleData()
	b := AppendData(nil, &d)
	binary.BigEndian.PutUint32(b[HeaderLen+56:], 4) // claim 4 of 5 payload bytes
	b = fixCRC(b)
	var got Data
	require.ErrorIs(t, ParseData(b, &got), ErrMalformed)
}

func fixCRC(b []byte) []byte { return appendCRC(b[:len(b)-CRCLen], 0) }

func TestAckRoundTrip(t *testing.T) {
	a, blocks, grants := sampleAck()
	b := AppendAck(nil, &a, blocks, grants)
	require.Len(t, b, AckLen(2, 2))
	var got Ack
	require.NoError(t, ParseAck(b, &got))
	require.Equal(t, a.Rate, got.Rate)
	require.Equal(t, a.Credit, got.Credit)
	require.Equal(t, a.FinBase, got.FinBase)
	require.Equal(t, 2, got.NumBlocks())
	require.Equal(t, 2, got.NumGrants())
	for i := range blocks {
		var blk AckBlock
		got.Block(i, &blk)
		require.Equal(t, blocks[i], blk)
	}
	require.Equal(t, uint64(19), got.Grant(1))
}

func TestAckBlockHas(t *testing.T) {
	_, blocks, _ := sampleAck()
	blk := blocks[0]
	blk.Skip = 0
	for seq, want := range map[uint64]bool{0: true, 999: true, 1000: false, 1001: true, 1002: false, 1003: true, 1256: true, 1257: false} {
		require.Equal(t, want, blk.Has(seq), "seq %d", seq)
	}
	// With a skip, the bitmap starts at Cum+1+Skip and nothing between is
	// reported.
	blk.Skip = 300
	for seq, want := range map[uint64]bool{999: true, 1000: false, 1001: false, 1300: false, 1301: true, 1302: false, 1303: true, 1556: true, 1557: false} {
		require.Equal(t, want, blk.Has(seq), "seq %d with skip", seq)
	}
}

func TestAckCountsMustMatchSize(t *testing.T) {
	a, blocks, grants := sampleAck()
	b := AppendAck(nil, &a, blocks, grants)
	binary.BigEndian.PutUint16(b[HeaderLen+32:], 3)
	var got Ack
	require.ErrorIs(t, ParseAck(fixCRC(b), &got), ErrShort)
	binary.BigEndian.PutUint16(b[HeaderLen+32:], 1)
	require.ErrorIs(t, ParseAck(fixCRC(b), &got), ErrMalformed)
}

func TestHelloProbeCloseRoundTrip(t *testing.T) {
	for _, h := range []Hello{
		{Src: 5, Node: 3, Paths: 4, MaxDatagram: 9000, MsgWindow: 4096, Budget: 1 << 22, SentAt: 123 * time.Millisecond},
		{Ack: true, Conn: 5, Path: 2, Src: 6, Node: 4, Paths: 256, MaxDatagram: 1452, MsgWindow: 1, Budget: 0, SentAt: 7},
		{Src: 5, Node: 3, Paths: 8, MaxDatagram: 8972, MsgWindow: 64, AckRoom: true},
		{Ack: true, Conn: 5, Src: 6, Paths: 8, MaxDatagram: 8972, MsgWindow: 64, AckRoom: true},
	} {
		var got Hello
		require.NoError(t, ParseHello(AppendHello(nil, &h), &got))
		require.Equal(t, h, got)
	}
	p := Probe{Conn: 9, Path: 200, Reply: true, Nonce: 77, SentAt: time.Second}
	var gp Probe
	require.NoError(t, ParseProbe(AppendProbe(nil, &p), &gp))
	require.Equal(t, p, gp)
	c := Close{Conn: 9, Path: 1, Code: CloseIdle}
	var gc Close
	require.NoError(t, ParseClose(AppendClose(nil, &c), &gc))
	require.Equal(t, c, gc)
}

func TestHelloRejectsBadFields(t *testing.T) {
	ok := Hello{Src: 1, Paths: 1, MaxDatagram: 1500, MsgWindow: 16}
	var got Hello
	require.NoError(t, ParseHello(AppendHello(nil, &ok), &got))
	for name, mutate := range map[string]func(h *Hello){
		"zero src":         func(h *Hello) { h.Src = 0 },
		"zero paths":       func(h *Hello) { h.Paths = 0 },
		"too many paths":   func(h *Hello) { h.Paths = 257 },
		"hello with conn":  func(h *Hello) { h.Conn = 3 },
		"ack without conn": func(h *Hello) { h.Ack = true },
		"tiny datagram":    func(h *Hello) { h.MaxDatagram = MinDatagram - 1 },
		"huge datagram":    func(h *Hello) { h.MaxDatagram = MaxDatagram + 1 },
		"zero msg window":  func(h *Hello) { h.MsgWindow = 0 },
	} {
		h := ok
		mutate(&h)
		require.ErrorIs(t, ParseHello(AppendHello(nil, &h), &got), ErrMalformed, name)
	}
	// FlagAckRoom is the one HELLO flag; any other is rejected.
	b := AppendHello(nil, &ok)
	for bit := range 8 {
		b[2] = 1 << bit
		err := ParseHello(fixCRC(b), &got)
		if b[2] == FlagAckRoom {
			require.NoError(t, err)
			require.True(t, got.AckRoom)
		} else {
			require.ErrorIs(t, err, ErrMalformed, "flag %#x", b[2])
		}
	}
}

func TestOpenRejectsDamage(t *testing.T) {
	d := sampleData()
	good := AppendData(nil, &d)
	var got Data
	require.ErrorIs(t, ParseData(good[:10], &got), ErrShort)
	bad := bytes.Clone(good)
	bad[0] = Version + 1
	require.ErrorIs(t, ParseData(bad, &got), ErrVersion)
	for bit := 8; bit < len(good)*8; bit += 37 {
		bad := bytes.Clone(good)
		bad[bit/8] ^= 1 << (bit % 8)
		require.ErrorIs(t, ParseData(bad, &got), ErrChecksum, "bit %d", bit)
	}
	var a Ack
	require.ErrorIs(t, ParseAck(good, &a), ErrType)
}

func TestNoAllocations(t *testing.T) {
	d := sampleData()
	a, blocks, grants := sampleAck()
	buf := make([]byte, 0, 4096)
	db := AppendData(nil, &d)
	ab := AppendAck(nil, &a, blocks, grants)
	var gd Data
	var ga Ack
	var blk AckBlock
	allocs := testing.AllocsPerRun(100, func() {
		buf = AppendData(buf[:0], &d)
		buf = AppendAck(buf[:0], &a, blocks, grants)
		if ParseData(db, &gd) != nil || ParseAck(ab, &ga) != nil {
			panic("parse failed")
		}
		ga.Block(1, &blk)
	})
	require.Zero(t, allocs)
}

func TestErrorsAreDistinct(t *testing.T) {
	errs := []error{ErrShort, ErrVersion, ErrChecksum, ErrType, ErrMalformed}
	for i := range errs {
		for j := range errs {
			require.Equal(t, i == j, errors.Is(errs[i], errs[j]))
		}
	}
}
