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

// TestChaos draws a random connection and fabric per seed (1 to 8 paths,
// three datagram sizes, budgets from none up, small message windows, rate
// share on, off or measured, links with loss, reordering, duplication,
// corruption, jitter, ECN, and cuts restored later) and sends 30 messages
// with receives posted late and some sends cancelled. Every message not
// cancelled must arrive once, intact, within 3 s of virtual time. Seed 1320
// found a sender stalled by a lost window update.
func TestChaos(t *testing.T) {
	seeds := []int64{1320}
	for seed := int64(1); seed <= 40; seed++ {
		seeds = append(seeds, seed)
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			chaos(t, seed)
		})
	}
}

func chaos(t *testing.T, seed int64) {
	r := rand.New(rand.NewPCG(uint64(seed), 77))
	paths := 1 + r.IntN(8)
	cfg := metaroce.Config{Paths: paths, MaxDatagram: []int{1500, 4096, 9000}[r.IntN(3)],
		UnexpectedBytes: int64(r.IntN(4)) * 50000, MsgWindow: 16 + r.IntN(50), InitialWindow: 1 + r.IntN(32),
		RecvCapacity: []int64{0, -1, unitRate}[r.IntN(3)]}
	s := newSim(t, seed, 2, cfg)
	var links []simfabric.LinkID
	for i := range paths {
		lc := simfabric.LinkConfig{Rate: unitRate / int64(1+r.IntN(4)), Delay: time.Duration(5+r.IntN(80)) * time.Microsecond,
			Jitter: time.Duration(r.IntN(20)) * time.Microsecond, Loss: r.Float64() * 0.1, Reorder: r.Float64() * 0.1,
			Dup: r.Float64() * 0.05, Corrupt: r.Float64() * 0.02, QueueBytes: 64<<10 + r.IntN(1<<20)}
		if r.IntN(3) == 0 {
			lc.ECNThresholdBytes = 16 << 10
		}
		f, b := s.link(lc), s.link(lc)
		s.path(0, 1, i, f)
		s.path(1, 0, i, b)
		links = append(links, f, b)
	}
	ca, cb := s.connect(0, 1)
	now := s.fab.Now()
	for k := 0; k < r.IntN(4); k++ {
		l := links[r.IntN(len(links))]
		at := now + time.Duration(r.IntN(3000))*time.Microsecond
		require.NoError(t, s.fab.Schedule(simfabric.Fault{At: at, Link: l, Kind: simfabric.Cut},
			simfabric.Fault{At: at + time.Duration(r.IntN(20000))*time.Microsecond, Link: l, Kind: simfabric.Restore}))
	}
	type msg struct {
		size          int
		buf           []byte
		posted        bool
		sendCancelled bool
	}
	msgs := make([]*msg, 30)
	for i := range msgs {
		m := &msg{size: []int{0, 1, 1000, 5000, 50000, 300000, 1 << 20}[r.IntN(7)]}
		m.buf = make([]byte, m.size)
		msgs[i] = m
		require.NoError(t, s.eps[0].Send(now, ca, uint64(i%4), uint64(i), fill(m.size, byte(i))))
		if r.IntN(2) == 0 {
			require.NoError(t, s.eps[1].PostRecv(now, cb, uint64(i%4), uint64(i), m.buf))
			m.posted = true
		}
	}
	for step := 0; step < 20; step++ {
		s.runTo(s.fab.Now() + time.Duration(r.IntN(500))*time.Microsecond)
		i := r.IntN(len(msgs))
		if r.IntN(8) == 0 && !msgs[i].sendCancelled {
			msgs[i].sendCancelled = s.eps[0].CancelSend(s.fab.Now(), ca, uint64(i%4), uint64(i))
		}
		if !msgs[i].posted {
			require.NoError(t, s.eps[1].PostRecv(s.fab.Now(), cb, uint64(i%4), uint64(i), msgs[i].buf))
			msgs[i].posted = true
		}
	}
	for i, m := range msgs {
		if !m.posted {
			require.NoError(t, s.eps[1].PostRecv(s.fab.Now(), cb, uint64(i%4), uint64(i), m.buf))
		}
	}
	s.runTo(s.fab.Now() + 3*time.Second)

	for i, m := range msgs {
		ev, ok := s.find(1, metaroce.EventRecvDone, uint64(i%4), uint64(i))
		require.LessOrEqual(t, s.count(1, metaroce.EventRecvDone, uint64(i%4), uint64(i)), 1)
		if m.sendCancelled {
			continue
		}
		require.True(t, ok, "msg %d (%d bytes) never arrived", i, m.size)
		require.NoError(t, ev.ev.Err)
		require.Equal(t, fill(m.size, byte(i)), m.buf, "msg %d", i)
	}
}
