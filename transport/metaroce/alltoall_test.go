package metaroce_test

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
	"github.com/stretchr/testify/require"
)

// TestAllToAllOverPlanes runs the traffic of an all-to-all collective: 16
// nodes, each with one 10 Gb/s link per plane up to and down from a
// 4-plane fabric, every node sending 256 KiB to every other (240
// connections, 4 paths each, every receiver an incast of 15 per plane).
// The switches mark ECN-CE above 32 KiB of queue, as MetaRoCE assumes:
// the per-path CE signal is what steers each connection's traffic between
// the planes (without it, with delay alone, the planes drift out of
// balance and the exchange takes about 1.6x the ideal time).
// Every byte must arrive, and the exchange should take close to the time
// the receivers' links need.
func TestAllToAllOverPlanes(t *testing.T) {
	const nodes, planes, size = 16, 4, 256 << 10
	cfg := figureConfig()
	cfg.Paths = planes
	cfg.RecvCapacity = planes * unitRate
	s := newSim(t, 13, nodes, cfg)
	var up, down [nodes][planes]simfabric.LinkID
	for i := range nodes {
		for p := range planes {
			up[i][p] = s.link(simfabric.LinkConfig{Rate: unitRate, Delay: unitDelay / 2, QueueBytes: 4 << 20, ECNThresholdBytes: 32 << 10})
			down[i][p] = s.link(simfabric.LinkConfig{Rate: unitRate, Delay: unitDelay / 2, QueueBytes: 4 << 20, ECNThresholdBytes: 32 << 10})
		}
	}
	for i := range nodes {
		for j := range nodes {
			for p := range planes {
				if i != j {
					s.path(i, j, p, up[i][p], down[j][p])
				}
			}
		}
	}
	conn := map[[2]int]metaroce.ConnID{}
	for i := range nodes {
		for j := i + 1; j < nodes; j++ {
			conn[[2]int{i, j}], conn[[2]int{j, i}] = s.connect(i, j)
		}
	}
	start := s.fab.Now()
	bufs := map[[2]int][]byte{}
	for i := range nodes {
		for j := range nodes {
			if i == j {
				continue
			}
			bufs[[2]int{i, j}] = make([]byte, size)
			require.NoError(t, s.eps[j].PostRecv(start, conn[[2]int{j, i}], 1, uint64(i), bufs[[2]int{i, j}]))
			require.NoError(t, s.eps[i].Send(start, conn[[2]int{i, j}], 1, uint64(i), fill(size, byte(i*nodes+j))))
		}
	}
	done, from := 0, len(s.log)
	s.runUntil(start+time.Second, func() bool {
		for _, e := range s.log[from:] {
			if e.ev.Kind == metaroce.EventRecvDone {
				require.NoError(t, e.ev.Err)
				done++
			}
		}
		from = len(s.log)
		return done == nodes*(nodes-1)
	})
	took := s.fab.Now() - start
	for k, b := range bufs {
		require.Equal(t, fill(size, byte(k[0]*nodes+k[1])), b, "%d->%d", k[0], k[1])
	}
	ideal := time.Duration(float64((nodes-1)*size) / float64(planes*unitRate) * float64(time.Second))
	drops := int64(0)
	for _, st := range s.fab.Stats().Links {
		drops += st.Dropped().Packets
	}
	t.Logf("all-to-all, %d nodes x %d planes, %d KiB per pair: %v (ideal %v at line rate: %.0f%%), %d packets dropped in the fabric",
		nodes, planes, size>>10, took, ideal, 100*float64(ideal)/float64(took), drops)
	require.Less(t, took, ideal*3/2+200*time.Microsecond)
}
