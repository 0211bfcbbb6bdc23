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

// TestBidirectionalMesh connects three nodes pairwise (1 to 4 faulty paths
// each way, some cut for 10 ms) and sends 60 messages in random directions
// on the same connections, so DATA and ACKs of both directions interleave;
// receives are posted in random order, some late. Every message must
// arrive once and intact, and every send complete.
func TestBidirectionalMesh(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprintf("s%d", seed), func(t *testing.T) {
			t.Parallel()
			bidirectional(t, seed)
		})
	}
}

func bidirectional(t *testing.T, seed int64) {
	r := rand.New(rand.NewPCG(uint64(seed), 5))
	const nodes = 3
	paths := 1 + r.IntN(4)
	cfg := metaroce.Config{Paths: paths, MaxDatagram: []int{1500, 9000}[r.IntN(2)], UnexpectedBytes: int64(r.IntN(3)) * 100000,
		MsgWindow: 16 + r.IntN(30), RecvCapacity: []int64{0, -1, unitRate}[r.IntN(3)]}
	s := newSim(t, seed, nodes, cfg)
	for a := range nodes {
		for b := range nodes {
			if a == b {
				continue
			}
			for p := range paths {
				lc := simfabric.LinkConfig{Rate: unitRate / int64(1+r.IntN(3)), Delay: time.Duration(5+r.IntN(50)) * time.Microsecond,
					Jitter: time.Duration(r.IntN(10)) * time.Microsecond, Loss: r.Float64() * 0.05, Reorder: 0.02, Dup: 0.01, Corrupt: 0.01,
					QueueBytes: 128<<10 + r.IntN(1<<20)}
				l := s.link(lc)
				s.path(a, b, p, l)
				if r.IntN(10) == 0 {
					at := time.Duration(r.IntN(5000)) * time.Microsecond
					require.NoError(t, s.fab.Schedule(simfabric.Fault{At: at + 10*time.Millisecond, Link: l, Kind: simfabric.Cut},
						simfabric.Fault{At: at + 20*time.Millisecond, Link: l, Kind: simfabric.Restore}))
				}
			}
		}
	}
	conn := map[[2]int]metaroce.ConnID{}
	for a := range nodes {
		for b := a + 1; b < nodes; b++ {
			conn[[2]int{a, b}], conn[[2]int{b, a}] = s.connect(a, b)
		}
	}
	type msg struct {
		from, to int
		id       uint64
		size     int
		buf      []byte
	}
	var msgs []msg
	now := s.fab.Now()
	for k := 0; k < 60; k++ {
		a := r.IntN(nodes)
		b := (a + 1 + r.IntN(nodes-1)) % nodes
		m := msg{from: a, to: b, id: uint64(k), size: []int{0, 100, 5000, 70000, 400000}[r.IntN(5)]}
		m.buf = make([]byte, m.size)
		msgs = append(msgs, m)
		require.NoError(t, s.eps[a].Send(now, conn[[2]int{a, b}], 7, m.id, fill(m.size, byte(k))))
	}
	r.Shuffle(len(msgs), func(i, j int) { msgs[i], msgs[j] = msgs[j], msgs[i] })
	for i, m := range msgs {
		if i%3 == 0 {
			s.runTo(s.fab.Now() + time.Duration(r.IntN(200))*time.Microsecond)
		}
		require.NoError(t, s.eps[m.to].PostRecv(s.fab.Now(), conn[[2]int{m.to, m.from}], 7, m.id, m.buf))
	}
	s.runTo(s.fab.Now() + 2*time.Second)
	for _, m := range msgs {
		ev, ok := s.find(m.to, metaroce.EventRecvDone, 7, m.id)
		require.True(t, ok, "msg %d %d->%d (%d bytes) never arrived", m.id, m.from, m.to, m.size)
		require.NoError(t, ev.ev.Err)
		require.Equal(t, 1, s.count(m.to, metaroce.EventRecvDone, 7, m.id))
		require.Equal(t, fill(m.size, byte(m.id)), m.buf)
		_, sent := s.find(m.from, metaroce.EventSendDone, 7, m.id)
		require.True(t, sent)
	}
}
