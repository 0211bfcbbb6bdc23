package udpio

import (
	"encoding/binary"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConcurrentWritersAndReader has two goroutines write batches through
// one socket while a reader on the same socket echoes nothing but waits:
// every datagram of both writers arrives once, each writer's in order.
func TestConcurrentWritersAndReader(t *testing.T) {
	rx := listen(t, loopback4, Config{})
	tx := listen(t, loopback4, Config{BatchSize: 8})
	const writers, perWriter = 2, 300
	readerDone := make(chan error, 1)
	go func() { // a reader blocked on the sending socket must not stop its writers
		_, err := tx.ReadBatch([]Message{{Buf: make([]byte, 10)}})
		readerDone <- err
	}()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := 0; i < perWriter; i += 10 {
				ms := make([]Message, 10)
				for j := range ms {
					buf := make([]byte, 8+j*100)
					binary.BigEndian.PutUint32(buf, uint32(w))
					binary.BigEndian.PutUint32(buf[4:], uint32(i+j))
					ms[j] = Message{Buf: buf, Addr: rx.LocalAddr()}
				}
				n, err := tx.WriteBatch(ms)
				if err != nil || n != len(ms) {
					t.Errorf("writer %d: %d sent: %v", w, n, err)
					return
				}
			}
		})
	}
	wg.Wait()
	next := make([]uint32, writers)
	for _, g := range readDatagrams(t, rx, writers*perWriter) {
		w, seq := binary.BigEndian.Uint32(g.data), binary.BigEndian.Uint32(g.data[4:])
		require.Less(t, w, uint32(writers))
		require.Equal(t, next[w], seq, "writer %d out of order", w)
		next[w]++
	}
	require.NoError(t, tx.Close())
	require.Error(t, <-readerDone)
}
