package udpio

import (
	"encoding/binary"
	"net/netip"
	"testing"
)

// FuzzSplitSegments walks arbitrary messages: no panic, the segments cover
// Buf[:N] exactly, and none is longer than Segment.
func FuzzSplitSegments(f *testing.F) {
	f.Add([]byte("aaabbbccd"), 9, 3)
	f.Add([]byte{}, 0, 0)
	f.Add(make([]byte, 65507), 65507, 1452)
	f.Add([]byte("xyz"), 5, -2)
	f.Fuzz(func(t *testing.T, buf []byte, n, segment int) {
		total, count := 0, 0
		SplitSegments(Message{Buf: buf, N: n, Segment: segment}, func(seg []byte) {
			if segment > 0 && len(seg) > segment {
				t.Fatalf("segment of %d bytes, size %d", len(seg), segment)
			}
			total += len(seg)
			count++
		})
		if want := min(max(n, 0), len(buf)); total != want {
			t.Fatalf("segments cover %d bytes, want %d", total, want)
		}
		if count == 0 {
			t.Fatal("no segment")
		}
	})
}

// FuzzGatherTrains packs messages described by the fuzzer's bytes (per four
// bytes: a size; an address, a class and whether the message is already a
// train; the slices it lies in) and checks that every output message keeps
// to the kernel's limits and is made of src's own slices, and that the
// output splits back into src's datagrams, in order, bytes equal.
func FuzzGatherTrains(f *testing.F) {
	f.Add([]byte{0, 100, 0, 0, 0, 100, 0, 0, 0, 50, 1, 0})
	f.Add([]byte{35, 40, 0, 2, 35, 40, 0, 2, 35, 40, 0, 1})
	f.Add([]byte{0, 30, 0, 2, 0, 30, 2, 2, 0, 90, 4, 0, 0, 30, 2, 2})
	f.Fuzz(func(t *testing.T, spec []byte) {
		addrs := []netip.AddrPort{addrA, addrB}
		var ds []dgram
		for i := 0; i+4 <= len(spec) && len(ds) < 300; i += 4 {
			size, flags := int(binary.BigEndian.Uint16(spec[i:]))%20000, spec[i+2]
			d := dgram{size: size, addr: addrs[flags&1], class: flags >> 1 & 1 * 46, pieces: int(spec[i+3])%4 + 1}
			if flags&4 != 0 {
				d.segment = max(size/3, 1)
			}
			ds = append(ds, d)
		}
		src := buildSrc(ds)
		out, _ := GatherTrains(nil, src, nil)
		checkTrains(t, src, out)
	})
}
