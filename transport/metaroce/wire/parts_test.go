package wire

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// splitData cuts a DATA packet into ParseDataParts' three parts by its
// length field; ok is false when the packet is too short for that.
func splitData(b []byte) (head, payload, tail []byte, ok bool) {
	if len(b) < DataHeadLen+CRCLen {
		return nil, nil, nil, false
	}
	n := int(binary.BigEndian.Uint32(b[DataHeadLen-4:]))
	if n > len(b)-DataHeadLen-CRCLen {
		return nil, nil, nil, false
	}
	return b[:DataHeadLen], b[DataHeadLen : DataHeadLen+n], b[DataHeadLen+n:], true
}

func TestUncheckedPayloadRoundTrip(t *testing.T) {
	d := sampleData()
	d.Flags |= FlagPayloadUnchecked
	for _, b := range [][]byte{AppendData(nil, &d), splitDataPacket(&d)} {
		var got Data
		require.NoError(t, ParseData(b, &got))
		require.Equal(t, d, got)
	}
}

// splitDataPacket builds d the way a gathering sender does: AppendDataSplit's
// head, the payload, then its rest (ACK body, CRC).
func splitDataPacket(d *Data) []byte {
	out := AppendDataSplit(nil, d)
	b := append([]byte(nil), out[:DataHeadLen]...)
	b = append(b, d.Payload...)
	return append(b, out[DataHeadLen:]...)
}

func TestUncheckedPayloadCoversAllButPayload(t *testing.T) {
	d := sampleData()
	d.Flags |= FlagPayloadUnchecked
	b := AppendData(nil, &d)
	var got Data
	payloadAt := DataHeadLen
	// Damage in the payload is not seen (by design: loopback only) ...
	damaged := bytes.Clone(b)
	damaged[payloadAt] ^= 1
	require.NoError(t, ParseData(damaged, &got))
	// ... damage anywhere else is.
	for i := range b {
		if i >= payloadAt && i < payloadAt+len(d.Payload) {
			continue
		}
		damaged := bytes.Clone(b)
		damaged[i] ^= 0x10
		require.Error(t, ParseData(damaged, &got), "byte %d", i)
	}
	// A checked packet sees damage in its payload.
	d.Flags &^= FlagPayloadUnchecked
	checked := AppendData(nil, &d)
	checked[payloadAt] ^= 1
	require.ErrorIs(t, ParseData(checked, &got), ErrChecksum)
}

func TestParseDataPartsMatchesParseData(t *testing.T) {
	ack, blocks, grants := sampleAck()
	withAck := sampleData()
	withAck.Flags |= FlagAck
	withAck.AckBody = AckBody(AppendAck(nil, &ack, blocks, grants))
	for name, d := range map[string]Data{"plain": sampleData(), "ack": withAck} {
		for _, flags := range []uint8{0, FlagPayloadUnchecked} {
			d := d
			d.Flags |= flags
			b := AppendData(nil, &d)
			head, payload, tail, ok := splitData(b)
			require.True(t, ok)
			var got Data
			require.NoError(t, ParseDataParts(head, payload, tail, &got), name)
			require.Equal(t, d, got, name)
		}
	}
}

func TestParseDataPartsRejects(t *testing.T) {
	d := sampleData()
	b := AppendData(nil, &d)
	head, payload, tail, _ := splitData(b)
	var got Data
	require.ErrorIs(t, ParseDataParts(head[:10], payload, tail, &got), ErrShort)
	require.ErrorIs(t, ParseDataParts(head, payload, tail[:2], &got), ErrShort)
	require.ErrorIs(t, ParseDataParts(head, payload[:2], tail, &got), ErrMalformed)
	bad := bytes.Clone(payload)
	bad[0] ^= 1
	require.ErrorIs(t, ParseDataParts(head, bad, tail, &got), ErrChecksum)
	v := bytes.Clone(head)
	v[0] = 9
	require.ErrorIs(t, ParseDataParts(v, payload, tail, &got), ErrVersion)
	// A piggybacked ACK body without FlagAck is rejected.
	extra := append(bytes.Clone(tail[:len(tail)-CRCLen]), 1, 2, 3)
	extra = binary.BigEndian.AppendUint32(extra, partsCRC(head, payload, extra))
	require.ErrorIs(t, ParseDataParts(head, payload, extra, &got), ErrMalformed)
}

// FuzzParseDataParts checks that a packet parsed in parts gives exactly
// what ParseData gives for the whole.
func FuzzParseDataParts(f *testing.F) {
	seedAll(f)
	d := sampleData()
	d.Flags |= FlagPayloadUnchecked
	f.Add(AppendData(nil, &d))
	f.Fuzz(func(t *testing.T, b []byte) {
		var peeked Data
		if n, err := PeekDataHead(b, &peeked); err == nil {
			require.Equal(t, uint32(n), binary.BigEndian.Uint32(b[DataHeadLen-4:]))
		}
		head, payload, tail, ok := splitData(b)
		if !ok {
			return
		}
		var whole, parts Data
		errWhole := ParseData(b, &whole)
		errParts := ParseDataParts(head, payload, tail, &parts)
		require.Equal(t, errWhole == nil, errParts == nil, "whole: %v, parts: %v", errWhole, errParts)
		if errWhole == nil {
			require.Equal(t, whole, parts)
		}
	})
}
