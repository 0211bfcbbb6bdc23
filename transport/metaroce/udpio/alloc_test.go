package udpio

import (
	"testing"
)

// pingBatch writes ms with tx and reads as many datagrams back with rx,
// reusing in; it returns the bytes read.
func pingBatch(tb testing.TB, tx, rx *Socket, ms, in []Message, datagrams int) int {
	n, err := tx.WriteBatch(ms)
	if err != nil || n != len(ms) {
		tb.Fatalf("WriteBatch: %d of %d: %v", n, len(ms), err)
	}
	bytes := 0
	for datagrams > 0 {
		n, err := rx.ReadBatch(in)
		if err != nil {
			tb.Fatalf("ReadBatch: %v", err)
		}
		for _, m := range in[:n] {
			bytes += m.N
			if m.Segment > 0 {
				datagrams -= (m.N + m.Segment - 1) / m.Segment
			} else {
				datagrams--
			}
		}
	}
	return bytes
}

func readBuffers(n, size int) []Message {
	in := make([]Message, n)
	for i := range in {
		in[i].Buf = make([]byte, size)
	}
	return in
}
