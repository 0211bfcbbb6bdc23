package metaroce_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
	"github.com/stretchr/testify/require"
)

// TestRandomCancelsAndLatePosts sends 60 messages over lossy, duplicating,
// corrupting paths with small budgets and message windows, while receives
// are posted late and sends and receives are cancelled at random. The
// unexpected bytes never exceed the budget, every message neither side
// cancelled completes once on both sides with the right bytes, and
// cancelled ones never make the others stall.
func TestRandomCancelsAndLatePosts(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		t.Run(fmt.Sprintf("s%d", seed), func(t *testing.T) {
			t.Parallel()
			cancelsAndLatePosts(t, seed)
		})
	}
}

func cancelsAndLatePosts(t *testing.T, seed int64) {
	r := rand.New(rand.NewPCG(uint64(seed), 9))
	paths := 1 + r.IntN(6)
	budget := int64(r.IntN(5)) * 20000
	cfg := metaroce.Config{Paths: paths, MaxDatagram: 1500, UnexpectedBytes: budget + 1, MsgWindow: 16 + r.IntN(20), MinRTO: 300 * time.Microsecond}
	s := newSim(t, seed, 2, cfg)
	link := simfabric.LinkConfig{Rate: unitRate / 4, Delay: 20 * time.Microsecond, Jitter: 10 * time.Microsecond,
		Loss: r.Float64() * 0.1, Reorder: 0.05, Dup: 0.02, Corrupt: 0.01, QueueBytes: 256 << 10}
	for i := range paths {
		s.path(0, 1, i, s.link(link))
		s.path(1, 0, i, s.link(link))
	}
	ca, cb := s.connect(0, 1)
	type msg struct {
		size                       int
		buf                        []byte
		posted, sendCancelled, rcv bool
		recvCancelled              bool
	}
	msgs := make([]*msg, 60)
	for i := range msgs {
		m := &msg{size: []int{0, 1, 1000, 1436, 5000, 50000, 200000}[r.IntN(7)]}
		m.buf = make([]byte, m.size+r.IntN(2))
		msgs[i] = m
		require.NoError(t, s.eps[0].Send(s.fab.Now(), ca, uint64(i%3), uint64(i), fill(m.size, byte(i))))
	}
	for step := 0; step < 40; step++ {
		s.runTo(s.fab.Now() + time.Duration(r.IntN(300))*time.Microsecond)
		cs, _ := s.pathStats(1, cb)
		require.LessOrEqual(t, cs.UnexpectedBytes, budget+1)
		i := r.IntN(len(msgs))
		m := msgs[i]
		switch r.IntN(6) {
		case 0:
			if !m.sendCancelled {
				m.sendCancelled = s.eps[0].CancelSend(s.fab.Now(), ca, uint64(i%3), uint64(i)) || m.sendCancelled
			}
		case 1:
			if m.posted && !m.recvCancelled {
				m.recvCancelled = s.eps[1].CancelRecv(s.fab.Now(), cb, uint64(i%3), uint64(i))
			}
		default:
			if !m.posted {
				require.NoError(t, s.eps[1].PostRecv(s.fab.Now(), cb, uint64(i%3), uint64(i), m.buf))
				m.posted = true
			}
		}
	}
	for i, m := range msgs {
		if m.recvCancelled { // an unposted message would hold the window
			require.NoError(t, s.eps[1].PostRecv(s.fab.Now(), cb, uint64(i%3), uint64(i), make([]byte, m.size+1)))
		}
		if !m.posted {
			require.NoError(t, s.eps[1].PostRecv(s.fab.Now(), cb, uint64(i%3), uint64(i), m.buf))
			m.posted = true
		}
	}
	s.runTo(s.fab.Now() + 200*time.Millisecond)
	for i, m := range msgs {
		ev, ok := s.find(1, metaroce.EventRecvDone, uint64(i%3), uint64(i))
		sent, sok := s.find(0, metaroce.EventSendDone, uint64(i%3), uint64(i))
		require.LessOrEqual(t, s.count(1, metaroce.EventRecvDone, uint64(i%3), uint64(i)), 1)
		if m.recvCancelled {
			continue
		}
		if !m.sendCancelled {
			require.True(t, ok, "msg %d (size %d) never received", i, m.size)
			require.NoError(t, ev.ev.Err)
			require.True(t, sok, "msg %d never send-done", i)
			require.NoError(t, sent.ev.Err)
		}
		if ok && ev.ev.Err == nil {
			require.Equal(t, fill(m.size, byte(i)), m.buf[:m.size], "msg %d", i)
		}
	}
}
