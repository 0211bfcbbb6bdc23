package udpio

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSplitSegments(t *testing.T) {
	buf := []byte("aaabbbccd")
	tests := []struct {
		name string
		m    Message
		want []string
	}{
		{"single datagram", Message{Buf: buf, N: 9}, []string{"aaabbbccd"}},
		{"empty datagram", Message{Buf: buf, N: 0}, []string{""}},
		{"train with short tail", Message{Buf: buf, N: 9, Segment: 3}, []string{"aaa", "bbb", "ccd"}},
		{"train of equal segments", Message{Buf: buf, N: 6, Segment: 3}, []string{"aaa", "bbb"}},
		{"segment as long as the data", Message{Buf: buf, N: 9, Segment: 9}, []string{"aaabbbccd"}},
		{"segment longer than the data", Message{Buf: buf, N: 4, Segment: 100}, []string{"aaab"}},
		{"segments of one byte", Message{Buf: buf, N: 3, Segment: 1}, []string{"a", "a", "a"}},
		{"N beyond the buffer is clamped", Message{Buf: buf, N: 100, Segment: 5}, []string{"aaabb", "bccd"}},
		{"negative N is clamped", Message{Buf: buf, N: -1, Segment: 5}, []string{""}},
		{"negative segment means one datagram", Message{Buf: buf, N: 5, Segment: -3}, []string{"aaabb"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			SplitSegments(tt.m, func(seg []byte) { got = append(got, string(seg)) })
			require.Equal(t, tt.want, got)
		})
	}
}

func TestSplitSegmentsCapsEachSegment(t *testing.T) {
	buf := []byte("aaabbb")
	var segs [][]byte
	SplitSegments(Message{Buf: buf, N: 6, Segment: 3}, func(seg []byte) { segs = append(segs, seg) })
	require.Len(t, segs, 2)
	_ = append(segs[0], 'X') // must not overwrite the next segment
	require.Equal(t, "bbb", string(segs[1]))
}

func TestMessageSegments(t *testing.T) {
	tests := []struct {
		len, segment, want int
	}{
		{0, 0, 1}, {10, 0, 1}, {10, 10, 1}, {10, 20, 1}, {10, -1, 1},
		{10, 5, 2}, {11, 5, 3}, {65507, 1452, 46}, {64 * 1000, 1000, 64},
	}
	for _, tt := range tests {
		m := Message{Buf: make([]byte, tt.len), Segment: tt.segment}
		require.Equal(t, tt.want, m.Segments(), "len %d segment %d", tt.len, tt.segment)
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"negative read buffer", Config{ReadBuffer: -1}},
		{"read buffer over the limit", Config{ReadBuffer: MaxSocketBuffer + 1}},
		{"negative write buffer", Config{WriteBuffer: -5}},
		{"write buffer over the limit", Config{WriteBuffer: MaxSocketBuffer + 1}},
		{"negative batch", Config{BatchSize: -1}},
		{"batch over the limit", Config{BatchSize: MaxBatchSize + 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Listen(loopback4, tt.cfg)
			require.ErrorIs(t, err, ErrConfig)
			require.Nil(t, s)
		})
	}
	t.Run("invalid address", func(t *testing.T) {
		_, err := Listen(netip.AddrPort{}, Config{})
		require.ErrorIs(t, err, ErrConfig)
	})
	t.Run("limits are accepted", func(t *testing.T) {
		s := listen(t, loopback4, Config{BatchSize: MaxBatchSize, ReadBuffer: 1, WriteBuffer: 1})
		require.Positive(t, s.Caps().ReadBuffer)
	})
}
