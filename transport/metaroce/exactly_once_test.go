package metaroce_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
	"github.com/stretchr/testify/require"
)

// TestExactlyOnceUnderFaults sends a mix of messages (0 bytes to 600 KB,
// some received before their receive is posted) over 1 to 64 paths whose
// links lose 0-20% of packets, reorder, duplicate, corrupt and jitter them,
// for several seeds. Every message must arrive whole, every byte at its
// offset, with exactly one completion on each side.
func TestExactlyOnceUnderFaults(t *testing.T) {
	for _, paths := range []int{1, 2, 4, 8, 64, 256} {
		for seed := int64(1); seed <= 12; seed++ {
			loss := []float64{0, 0.02, 0.05, 0.1, 0.15, 0.2}[seed%6]
			t.Run(fmt.Sprintf("paths=%d/seed=%d/loss=%.0f%%", paths, seed, 100*loss), func(t *testing.T) {
				t.Parallel()
				exactlyOnce(t, paths, seed*100+int64(paths), loss)
			})
		}
	}
}

func exactlyOnce(t *testing.T, paths int, seed int64, loss float64) {
	cfg := metaroce.Config{Paths: paths, MaxDatagram: 1500, UnexpectedBytes: 256 << 10, MinRTO: 300 * time.Microsecond}
	s := newSim(t, seed, 2, cfg)
	link := simfabric.LinkConfig{
		Rate: unitRate / 4, Delay: 20 * time.Microsecond, Jitter: 10 * time.Microsecond,
		Loss: loss, Reorder: 0.05, Dup: 0.02, Corrupt: 0.02, QueueBytes: 256 << 10,
	}
	for i := range paths { // faults in both directions: ACKs suffer too
		s.path(0, 1, i, s.link(link))
		s.path(1, 0, i, s.link(link))
	}
	ca, cb := s.connect(0, 1)
	sizes := []int{0, 1, 1424, 1425, 5000, 64 << 10, 200_000, 600_000}
	type msg struct {
		stream, id uint64
		buf        []byte
	}
	var msgs []msg
	now := s.fab.Now()
	for i, size := range sizes {
		for stream := uint64(0); stream < 2; stream++ {
			m := msg{stream, uint64(i), make([]byte, size+int(stream))}
			for j := range m.buf {
				m.buf[j] = 0xEE // anything not written stays visible
			}
			msgs = append(msgs, m)
			require.NoError(t, s.eps[0].Send(now, ca, m.stream, m.id, fill(size, byte(i)+byte(stream))))
			if (i+int(stream))%2 == 0 {
				require.NoError(t, s.eps[1].PostRecv(now, cb, m.stream, m.id, m.buf))
			}
		}
	}
	s.runTo(now + 2*time.Millisecond)
	for i, m := range msgs {
		if (int(m.id)+int(m.stream))%2 != 0 {
			require.NoError(t, s.eps[1].PostRecv(s.fab.Now(), cb, m.stream, m.id, msgs[i].buf))
		}
	}
	s.runUntil(10*time.Second, func() bool {
		for _, m := range msgs {
			if s.count(1, metaroce.EventRecvDone, m.stream, m.id) == 0 || s.count(0, metaroce.EventSendDone, m.stream, m.id) == 0 {
				return false
			}
		}
		return true
	})
	finished := s.fab.Now()
	s.runTo(s.fab.Now() + 5*time.Millisecond) // late duplicates must change nothing
	for _, m := range msgs {
		size := sizes[m.id]
		ev, _ := s.find(1, metaroce.EventRecvDone, m.stream, m.id)
		require.NoError(t, ev.ev.Err)
		require.Equal(t, size, ev.ev.N)
		require.Equal(t, 1, s.count(1, metaroce.EventRecvDone, m.stream, m.id), "completions of %d/%d", m.stream, m.id)
		require.Equal(t, 1, s.count(0, metaroce.EventSendDone, m.stream, m.id))
		require.Equal(t, fill(size, byte(m.id)+byte(m.stream)), m.buf[:size], "message %d/%d", m.stream, m.id)
		for j := size; j < len(m.buf); j++ {
			require.Equal(t, byte(0xEE), m.buf[j], "byte %d past the message end written", j)
		}
	}
	cs, _ := s.pathStats(1, cb)
	require.Zero(t, cs.UnexpectedBytes)
	st := s.eps[1].Stats()
	t.Logf("all done at %v virtual; dropped at receiver: checksum %d, malformed %d; discarded by message layer %d", finished, st.DropChecksum, st.DropMalformed, cs.Discarded)
}
