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

// dgram describes one message of a GatherTrains input.
type dgram struct {
	size    int
	addr    netip.AddrPort
	pieces  int   // slices the datagram lies in: Buf and pieces-1 Gather slices (0 counts as 1)
	segment int   // Segment of the input message (already a train)
	class   uint8 // Class of the input message
}

// buildSrc makes messages of the given datagrams, their bytes all distinct
// slices of one array (each with its capacity ending at its length).
func buildSrc(ds []dgram) []Message {
	total := 0
	for _, d := range ds {
		total += d.size
	}
	backing := pattern(99, total)
	src := make([]Message, len(ds))
	off := 0
	for i, d := range ds {
		parts := max(d.pieces, 1)
		var sl [][]byte
		for k := range parts {
			lo, hi := off+d.size*k/parts, off+d.size*(k+1)/parts
			sl = append(sl, backing[lo:hi:hi])
		}
		src[i] = Message{Buf: sl[0], Addr: d.addr, Segment: d.segment, Class: d.class}
		if parts > 1 {
			src[i].Gather = sl[1:]
		}
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

func TestGatherTrains(t *testing.T) {
	a100 := dgram{size: 100, addr: addrA}
	tests := []struct {
		name     string
		src      []dgram
		wantSize []int
		wantSeg  []int
	}{
		{"empty input", nil, nil, nil},
		{"one datagram is passed through", []dgram{a100}, []int{100}, []int{0}},
		{"two equal datagrams", []dgram{a100, a100}, []int{200}, []int{100}},
		{"gathered datagrams", repeat(3, dgram{size: 90, addr: addrA, pieces: 3}), []int{270}, []int{90}},
		{"shorter last datagram ends the train",
			[]dgram{a100, a100, {size: 40, addr: addrA}, a100},
			[]int{240, 100}, []int{100, 0}},
		{"longer datagram starts a new train",
			[]dgram{a100, a100, {size: 101, addr: addrA}, {size: 101, addr: addrA}},
			[]int{200, 202}, []int{100, 101}},
		{"address change starts a new train",
			[]dgram{a100, a100, {size: 100, addr: addrB}, {size: 100, addr: addrB}},
			[]int{200, 200}, []int{100, 100}},
		{"class change starts a new train",
			[]dgram{a100, a100, {size: 100, addr: addrA, class: 46}, {size: 100, addr: addrA, class: 46}},
			[]int{200, 200}, []int{100, 100}},
		{"empty datagram is never merged",
			[]dgram{a100, {size: 0, addr: addrA}, a100, {size: 0, addr: addrA}},
			[]int{100, 0, 100, 0}, []int{0, 0, 0, 0}},
		{"existing train is passed through and joins nothing",
			[]dgram{a100, {size: 300, addr: addrA, segment: 100}, a100},
			[]int{100, 300, 100}, []int{0, 100, 0}},
		{"a train does not start a run",
			[]dgram{{size: 200, addr: addrA, segment: 100}, a100},
			[]int{200, 100}, []int{100, 0}},
		{"a train does not end a run",
			[]dgram{a100, {size: 50, addr: addrA, segment: 25}},
			[]int{100, 50}, []int{0, 25}},
		{"segment limit (the gather limit: one slice a datagram)", repeat(MaxSegments+1, dgram{size: 10, addr: addrA}),
			[]int{10 * MaxSegments, 10}, []int{10, 0}},
		{"payload limit", repeat(8, dgram{size: 9000, addr: addrA, pieces: 2}),
			[]int{63000, 9000}, []int{9000, 0}},
		{"payload limit exactly reached", append(repeat(7, dgram{size: 9000, addr: addrA}), dgram{size: MaxPayload - 63000, addr: addrA}),
			[]int{MaxPayload}, []int{9000}},
		{"payload limit passed by a byte", append(repeat(7, dgram{size: 9000, addr: addrA}), dgram{size: MaxPayload - 62999, addr: addrA}),
			[]int{63000, MaxPayload - 62999}, []int{9000, 0}},
		{"four of the largest datagrams that join", repeat(5, dgram{size: MaxTrainDatagram, addr: addrA}),
			[]int{4 * MaxTrainDatagram, MaxTrainDatagram}, []int{MaxTrainDatagram, 0}},
		{"gather limit", repeat(25, dgram{size: 30, addr: addrA, pieces: 3}),
			[]int{30 * 21, 30 * 4}, []int{30, 30}},
		{"largest datagram that joins", repeat(2, dgram{size: MaxTrainDatagram, addr: addrA}),
			[]int{2 * MaxTrainDatagram}, []int{MaxTrainDatagram}},
		{"larger datagrams go alone", repeat(2, dgram{size: MaxTrainDatagram + 1, addr: addrA}),
			[]int{MaxTrainDatagram + 1, MaxTrainDatagram + 1}, []int{0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := buildSrc(tt.src)
			before := cloneMessages(src)
			out, _ := GatherTrains(nil, src, nil)
			require.Equal(t, tt.wantSize, sizes(out))
			require.Equal(t, tt.wantSeg, segs(out))
			require.Equal(t, before, src, "src was modified")
			checkTrains(t, src, out)
		})
	}
}

// TestGatherTrainsAppends: the output and the trains' slices are appended
// to dst and slices, whose earlier elements stay as they were.
func TestGatherTrainsAppends(t *testing.T) {
	src := buildSrc(repeat(3, dgram{size: 10, addr: addrA}))
	keep := []byte("kept")
	dst := make([]Message, 1, 8)
	slices := [][]byte{keep}
	out, slices := GatherTrains(dst, src, slices)
	require.Len(t, out, 2)
	require.Equal(t, 30, out[1].Size())
	require.Len(t, slices, 3)
	require.Same(t, &keep[0], &slices[0][0])
	require.Len(t, out[1].Gather, 2)
	require.Equal(t, len(out[1].Gather), cap(out[1].Gather), "a train's Gather ends at its length")
}

// checkTrains checks that out carries exactly the datagrams of src, in
// order, to the same addresses and classes, within the kernel's limits,
// in src's own slices (no copy).
func checkTrains(t *testing.T, src, out []Message) {
	t.Helper()
	type dest struct {
		addr  netip.AddrPort
		class uint8
	}
	owned := map[*byte]int{} // src's slices: first byte -> length
	var want, got [][]byte
	var wantTo, gotTo []dest
	for _, m := range src {
		for _, s := range append([][]byte{m.Buf}, m.Gather...) {
			if len(s) > 0 {
				owned[&s[0]] = len(s)
			}
		}
		splitWritten(m, func(seg []byte) {
			want = append(want, seg)
			wantTo = append(wantTo, dest{m.Addr, m.Class})
		})
	}
	covered := 0
	for _, m := range out {
		require.LessOrEqual(t, len(m.Gather), maxGatherOf(&m))
		if m.Segment > 0 && m.Size() > m.Segment {
			require.LessOrEqual(t, m.Size(), MaxPayload)
			require.LessOrEqual(t, m.Segments(), MaxSegments)
		}
		for _, s := range append([][]byte{m.Buf}, m.Gather...) {
			if len(s) > 0 {
				n, ok := owned[&s[0]]
				require.True(t, ok && n == len(s), "an output slice is not one of src's")
			}
		}
		covered += m.Segments()
		splitWritten(m, func(seg []byte) {
			got = append(got, seg)
			gotTo = append(gotTo, dest{m.Addr, m.Class})
		})
	}
	require.Equal(t, len(want), covered, "Segments of the output count src's datagrams")
	require.Equal(t, len(want), len(got))
	for i := range want {
		require.True(t, bytes.Equal(want[i], got[i]), "datagram %d differs", i)
	}
	require.Equal(t, wantTo, gotTo)
}

// splitWritten calls fn with each datagram a written message stands for:
// its bytes (Buf and then Gather) cut every Segment bytes.
func splitWritten(m Message, fn func(seg []byte)) {
	b := bytes.Join(append([][]byte{m.Buf}, m.Gather...), nil)
	SplitSegments(Message{Buf: b, N: len(b), Segment: m.Segment}, fn)
}

func cloneMessages(ms []Message) []Message {
	c := make([]Message, len(ms))
	for i, m := range ms {
		c[i] = m
		c[i].Buf = bytes.Clone(m.Buf)
		c[i].Gather = nil
		for _, g := range m.Gather {
			c[i].Gather = append(c[i].Gather, bytes.Clone(g))
		}
	}
	return c
}

func sizes(ms []Message) []int {
	var l []int
	for _, m := range ms {
		l = append(l, m.Size())
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
