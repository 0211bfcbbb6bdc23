package tune

import "testing"

func TestOnBoard(t *testing.T) {
	const slot = 64 << 10
	for _, c := range []struct {
		op                  BoardOp
		bytes, ranks, limit int
		forced, want        bool
	}{
		{BoardAllReduce, 8, 4, 16 << 10, false, true},
		{BoardAllReduce, 16 << 10, 4, 16 << 10, false, true},
		{BoardAllReduce, 16<<10 + 1, 4, 16 << 10, false, false},
		{BoardAllReduce, 32 << 10, 4, 16 << 10, true, true}, // forced: up to the slot
		{BoardAllReduce, slot + 1, 4, 16 << 10, true, false},
		{BoardAllReduce, 8, 1, 16 << 10, false, false}, // alone: nothing to share
		{BoardAllReduce, 8, 4, -1, false, false},       // never
		{BoardBroadcast, 0, 2, 0, false, true},
		{BoardAllToAll, 16 << 10, 4, 16 << 10, false, true}, // 4 blocks fill the slot
		{BoardAllToAll, 16 << 10, 5, 16 << 10, false, false},
		{BoardBarrier, 0, 16, -1, false, false},
		{BoardBarrier, 0, 16, 0, false, true},
	} {
		if got := OnBoard(c.op, c.bytes, c.ranks, c.limit, slot, c.forced); got != c.want {
			t.Errorf("OnBoard(%d, %d bytes, %d ranks, limit %d, forced %v) = %v, want %v", c.op, c.bytes, c.ranks, c.limit, c.forced, got, c.want)
		}
	}
}

func TestBoardSplit(t *testing.T) {
	for _, c := range []struct {
		bytes, ranks, above int
		want                bool
	}{
		{16 << 10, 4, 16 << 10, false}, // at the bound: one round
		{16<<10 + 8, 4, 16 << 10, true},
		{64 << 10, 4, 16 << 10, true},
		{64 << 10, 1, 16 << 10, false}, // alone: nothing to fold
		{64 << 10, 4, -1, false},       // never
		{8, 4, 0, true},
	} {
		if got := BoardSplit(c.bytes, c.ranks, c.above); got != c.want {
			t.Errorf("BoardSplit(%d bytes, %d ranks, above %d) = %v, want %v", c.bytes, c.ranks, c.above, got, c.want)
		}
	}
}
