package tune

import "testing"

func TestLocalBroadcast(t *testing.T) {
	const small = 64 << 10
	for _, c := range []struct {
		bytes, small int
		shared       bool
		want         LocalAlgo
	}{
		{0, small, true, LocalDissemination},
		{8, small, true, LocalDissemination},
		{small, small, true, LocalDissemination},
		{small + 1, small, true, LocalDirect},
		{16 << 20, small, true, LocalDirect},
		{8, small, false, LocalDissemination},
		{small, small, false, LocalDissemination},
		{small + 1, small, false, LocalChain},
		{1024, 512, false, LocalChain},
	} {
		if got := LocalBroadcast(c.bytes, c.small, c.shared); got != c.want {
			t.Errorf("LocalBroadcast(%d, %d, %v) = %d, want %d", c.bytes, c.small, c.shared, got, c.want)
		}
	}
}
