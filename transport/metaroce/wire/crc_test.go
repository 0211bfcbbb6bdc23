package wire

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/stretchr/testify/require"
)

// The trailer of a DATA packet is hash/crc32's CRC-32C of every byte
// before it, at every size a path carries (the folding of
// internal/crc32c takes over from 512 bytes), whole or split; and a flip
// of any one payload bit is caught.
func TestDataCRCIsCastagnoli(t *testing.T) {
	tab := crc32.MakeTable(crc32.Castagnoli)
	for _, n := range []int{0, 500, 1000, 1452, 8900, 8972, 65000} {
		d := sampleData()
		d.Payload = make([]byte, n)
		for i := range d.Payload {
			d.Payload[i] = byte(i*13 + i>>8)
		}
		d.Total = 95 + uint64(n)
		d.Offset = d.Total - uint64(n)
		p := AppendData(nil, &d)
		end := len(p) - CRCLen
		want := crc32.Checksum(p[:end], tab)
		require.Equal(t, want, binary.BigEndian.Uint32(p[end:]), "payload of %d bytes", n)
		split := AppendDataSplit(nil, &d)
		require.Equal(t, want, binary.BigEndian.Uint32(split[len(split)-CRCLen:]), "split, payload of %d bytes", n)
		var got Data
		require.NoError(t, ParseData(p, &got))
		for bit := DataHeadLen * 8; bit < (DataHeadLen+n)*8; bit += 8*97 + 1 {
			bad := bytes.Clone(p)
			bad[bit/8] ^= 1 << (bit % 8)
			require.ErrorIs(t, ParseData(bad, &got), ErrChecksum, "payload of %d bytes, bit %d", n, bit)
			require.ErrorIs(t, ParseDataParts(bad[:DataHeadLen], bad[DataHeadLen:DataHeadLen+n], bad[DataHeadLen+n:], &got), ErrChecksum)
		}
	}
}

// Making and checking a jumbo DATA packet, whole or split, allocates
// nothing (the CRC's folding included: TestNoAllocations's packets are too
// short to be folded).
func TestJumboDataNoAllocations(t *testing.T) {
	d := sampleData()
	d.Payload = make([]byte, 8900)
	d.Total = 95 + uint64(len(d.Payload))
	d.Offset = 95
	buf := make([]byte, 0, 9100)
	p := AppendData(nil, &d)
	n := len(d.Payload)
	var got Data
	allocs := testing.AllocsPerRun(100, func() {
		buf = AppendData(buf[:0], &d)
		buf = AppendDataSplit(buf[:0], &d)
		if ParseData(p, &got) != nil || ParseDataParts(p[:DataHeadLen], p[DataHeadLen:DataHeadLen+n], p[DataHeadLen+n:], &got) != nil {
			panic("parse failed")
		}
	})
	require.Zero(t, allocs)
}
