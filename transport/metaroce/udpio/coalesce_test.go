package udpio

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

var (
	addrA = netip.MustParseAddrPort("10.0.0.1:5000")
	addrB = netip.MustParseAddrPort("10.0.0.2:5000")
)

// dgram describes one datagram of a Coalesce input.
type dgram struct {
	size    int
	addr    netip.AddrPort
	segment int // Segment of the input message (already a train)
}

// buildSrc makes messages of the given datagrams, each in its own array
// (exact capacity) or, if contiguous, back to back in one array.
func buildSrc(ds []dgram, contiguous bool) []Message {
	total := 0
	for _, d := range ds {
		total += d.size
	}
	backing := pattern(99, total)
	src := make([]Message, len(ds))
	off := 0
	for i, d := range ds {
		buf := append([]byte(nil), backing[off:off+d.size]...)
		if contiguous {
			buf = backing[off : off+d.size]
		}
		src[i] = Message{Buf: buf, Addr: d.addr, Segment: d.segment}
		off += d.size
	}
	return src
}

func repeat(n int, d dgram) []dgram {
	ds := make([]dgram, n)
	for i := range ds {
		ds[i] = d
	}
	return ds
}

func TestCoalesce(t *testing.T) {
	a100 := dgram{size: 100, addr: addrA}
	tests := []struct {
		name       string
		src        []dgram
		contiguous bool
		arena      int
		wantLens   []int
		wantSeg    []int
		wantUsed   int
	}{
		{"empty input", nil, false, 1000, nil, nil, 0},
		{"one datagram is passed through", []dgram{a100}, false, 1000, []int{100}, []int{0}, 0},
		{"two equal datagrams copied", []dgram{a100, a100}, false, 1000, []int{200}, []int{100}, 200},
		{"two equal datagrams back to back", []dgram{a100, a100}, true, 0, []int{200}, []int{100}, 0},
		{"no arena, not back to back", []dgram{a100, a100}, false, 0, []int{100, 100}, []int{0, 0}, 0},
		{"shorter last datagram ends the train",
			[]dgram{a100, a100, {size: 40, addr: addrA}, a100}, false, 1000,
			[]int{240, 100}, []int{100, 0}, 240},
		{"longer datagram starts a new train",
			[]dgram{a100, a100, {size: 101, addr: addrA}, {size: 101, addr: addrA}}, false, 1000,
			[]int{200, 202}, []int{100, 101}, 402},
		{"address change starts a new train",
			[]dgram{a100, a100, {size: 100, addr: addrB}, {size: 100, addr: addrB}}, true, 0,
			[]int{200, 200}, []int{100, 100}, 0},
		{"empty datagram is never merged",
			[]dgram{a100, {size: 0, addr: addrA}, a100}, true, 0,
			[]int{100, 0, 100}, []int{0, 0, 0}, 0},
		{"existing train is passed through",
			[]dgram{a100, {size: 300, addr: addrA, segment: 100}, a100}, true, 0,
			[]int{100, 300, 100}, []int{0, 100, 0}, 0},
		{"segment limit of 64", repeat(MaxSegments+1, dgram{size: 10, addr: addrA}), true, 0,
			[]int{640, 10}, []int{10, 0}, 0},
		{"payload limit", repeat(8, dgram{size: 9000, addr: addrA}), true, 0,
			[]int{63000, 9000}, []int{9000, 0}, 0},
		{"payload limit exactly reached", repeat(3, dgram{size: MaxPayload / 3, addr: addrA}), false, 1 << 17,
			[]int{MaxPayload / 3 * 3}, []int{MaxPayload / 3}, MaxPayload / 3 * 3},
		{"arena runs out", repeat(5, a100), false, 350,
			[]int{300, 100, 100}, []int{100, 0, 0}, 300},
		{"arena too small for two", repeat(3, a100), false, 150,
			[]int{100, 100, 100}, []int{0, 0, 0}, 0},
		{"big datagrams are not merged", repeat(2, dgram{size: 40000, addr: addrA}), true, 0,
			[]int{40000, 40000}, []int{0, 0}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := buildSrc(tt.src, tt.contiguous)
			before := cloneMessages(src)
			arena := make([]byte, tt.arena)
			out, used := Coalesce(nil, src, arena)
			require.Equal(t, tt.wantUsed, used)
			require.Equal(t, tt.wantLens, lens(out))
			require.Equal(t, tt.wantSeg, segs(out))
			require.Equal(t, before, src, "src was modified")
			checkCoalesced(t, src, out)
		})
	}
}

// TestCoalesceMixesInPlaceAndCopy starts a train back to back, then meets
// a datagram elsewhere and moves the train into the arena.
func TestCoalesceMixesInPlaceAndCopy(t *testing.T) {
	src := buildSrc(repeat(3, dgram{size: 50, addr: addrA}), true)
	src = append(src, buildSrc(repeat(2, dgram{size: 50, addr: addrA}), false)...)
	out, used := Coalesce(nil, src, make([]byte, 1000))
	require.Equal(t, []int{250}, lens(out))
	require.Equal(t, 250, used)
	checkCoalesced(t, src, out)
}

func TestCoalesceAppendsToDst(t *testing.T) {
	src := buildSrc(repeat(2, dgram{size: 10, addr: addrA}), true)
	dst := make([]Message, 1, 8)
	out, _ := Coalesce(dst, src, nil)
	require.Len(t, out, 2)
	require.Equal(t, 20, len(out[1].Buf))
}

// checkCoalesced checks that out carries exactly the datagrams of src, in
// order, to the right addresses, within the kernel's limits.
func checkCoalesced(t *testing.T, src, out []Message) {
	t.Helper()
	var want, got [][]byte
	var wantTo, gotTo []netip.AddrPort
	for _, m := range src {
		SplitSegments(Message{Buf: m.Buf, N: len(m.Buf), Segment: m.Segment}, func(seg []byte) {
			want = append(want, seg)
			wantTo = append(wantTo, m.Addr)
		})
	}
	covered := 0
	for _, m := range out {
		if m.Segment > 0 && len(m.Buf) > m.Segment {
			require.LessOrEqual(t, len(m.Buf), MaxPayload)
			require.LessOrEqual(t, m.Segments(), MaxSegments)
		}
		covered += m.Segments()
		SplitSegments(Message{Buf: m.Buf, N: len(m.Buf), Segment: m.Segment}, func(seg []byte) {
			got = append(got, seg)
			gotTo = append(gotTo, m.Addr)
		})
	}
	require.Equal(t, len(want), covered)
	require.Equal(t, len(want), len(got))
	for i := range want {
		require.True(t, bytes.Equal(want[i], got[i]), "datagram %d differs", i)
	}
	require.Equal(t, wantTo, gotTo)
}

func cloneMessages(ms []Message) []Message {
	c := make([]Message, len(ms))
	for i, m := range ms {
		c[i] = m
		c[i].Buf = bytes.Clone(m.Buf)
	}
	return c
}

func lens(ms []Message) []int {
	var l []int
	for _, m := range ms {
		l = append(l, len(m.Buf))
	}
	return l
}

func segs(ms []Message) []int {
	var s []int
	for _, m := range ms {
		s = append(s, m.Segment)
	}
	return s
}
