package collective

import (
	"testing"

	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
)

// FuzzBoardHeader feeds parseBoardHeader what another process may have
// written in a board slot's header: it never panics, and what it accepts
// marshals back to the same bytes.
func FuzzBoardHeader(f *testing.F) {
	for _, h := range []header{
		{kind: KindAllReduce, dt: dtype.Float32, op: reduce.Sum, root: -1, count: 2, algo: AlgoBoard, chunk: 512 << 10},
		{kind: KindBarrier, root: -1, algo: AlgoBoard},
		{kind: KindBroadcast, dt: dtype.Int8, root: 3, count: 1 << 40, algo: AlgoBoard},
	} {
		b := make([]byte, headerLen)
		h.marshal(b)
		f.Add(b)
	}
	f.Add(make([]byte, headerLen))
	f.Add([]byte{headerMagic, headerVer, 1, 2, 3, 4, flagCarries})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := parseBoardHeader(b)
		if err != nil {
			return
		}
		if h.carries || len(b) != headerLen {
			t.Fatalf("accepted a header that carries data: %x", b)
		}
		out := make([]byte, headerLen)
		h.marshal(out)
		if string(out) != string(b) {
			t.Fatalf("%x decodes to %+v, which marshals to %x", b, h, out)
		}
	})
}
