package tune

import "testing"

func TestLocalBroadcast(t *testing.T) {
	const inline, small = 4064, 64 << 10
	for _, c := range []struct {
		bytes, small int
		shared       bool
		want         LocalAlgo
	}{
		{0, small, true, LocalDissemination},
		{8, small, true, LocalDissemination},
		{inline, small, true, LocalDissemination},
		{inline + 1, small, true, LocalDirect},
		{64 << 10, small, true, LocalDirect},
		{16 << 20, small, true, LocalDirect},
		{1024, 512, true, LocalDirect}, // SmallBytes below the inline bytes
		{8, small, false, LocalDissemination},
		{64 << 10, small, false, LocalDissemination},
		{64<<10 + 1, small, false, LocalChain},
	} {
		if got := LocalBroadcast(c.bytes, inline, c.small, c.shared); got != c.want {
			t.Errorf("LocalBroadcast(%d, %d, %d, %v) = %d, want %d", c.bytes, inline, c.small, c.shared, got, c.want)
		}
	}
}
