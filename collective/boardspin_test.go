package collective

import (
	"context"
	"testing"

	"github.com/gocoll/gocoll/transport"
)

// spinHost is a transport.BoardHost that counts its two spins.
type spinHost struct {
	transport.BoardHost
	spins, long *int
}

func (h spinHost) Spin(context.Context, func() bool) bool     { *h.spins++; return false }
func (h spinHost) SpinLong(context.Context, func() bool) bool { *h.long++; return false }

// TestBoardSpinLongForBigBroadcast: a board wait of a Broadcast or an
// AllToAll on a big slot takes the host's long spin (SpinLong: a copy of
// up to a slot's data ends it); one of a ring Broadcast or of an
// AllReduce takes its own.
func TestBoardSpinLongForBigBroadcast(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind Kind
		slot int
		long bool
	}{
		{"Broadcast, big slot", KindBroadcast, 1, true},
		{"Broadcast, ring slot", KindBroadcast, boardSlots + 3, false},
		{"AllReduce, big slot", KindAllReduce, 1, false},
		{"AllToAll, big slot", KindAllToAll, 0, true},
	} {
		var spins, long int
		c := &Comm{}
		c.board.host = spinHost{spins: &spins, long: &long}
		o := &operation{c: c, ctx: context.Background(), hdr: header{kind: tc.kind}, boardSlot: tc.slot}
		o.boardReadyFn = func() bool { return false }
		o.boardSpin()
		if got := long == 1 && spins == 0; got != tc.long || spins+long != 1 {
			t.Errorf("%s: %d spins, %d long spins; want a long one: %v", tc.name, spins, long, tc.long)
		}
	}
}
