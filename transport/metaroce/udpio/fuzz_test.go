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

// FuzzCoalesce packs datagrams described by the fuzzer's bytes (a size and
// an address per three bytes) and checks the kernel's limits and that the
// datagrams come out unchanged and in order.
func FuzzCoalesce(f *testing.F) {
	f.Add([]byte{0, 100, 0, 0, 100, 0, 0, 50, 1}, uint16(1000), false)
	f.Add([]byte{35, 40, 0, 35, 40, 0, 35, 40, 0}, uint16(0), true)
	f.Fuzz(func(t *testing.T, spec []byte, arena uint16, contiguous bool) {
		addrs := []netip.AddrPort{addrA, addrB}
		var ds []dgram
		for i := 0; i+3 <= len(spec) && len(ds) < 200; i += 3 {
			ds = append(ds, dgram{size: int(binary.BigEndian.Uint16(spec[i:])) % 20000, addr: addrs[spec[i+2]%2]})
		}
		src := buildSrc(ds, contiguous)
		out, used := Coalesce(nil, src, make([]byte, arena))
		if used < 0 || used > int(arena) {
			t.Fatalf("used %d of an arena of %d", used, arena)
		}
		checkCoalesced(t, src, out)
	})
}
