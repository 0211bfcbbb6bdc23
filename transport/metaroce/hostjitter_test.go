package metaroce_test

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
	"github.com/stretchr/testify/require"
)

// TestHostJitterWindowsLeaveTheFloor: a connection of 8 short paths (10
// Gbit/s, 5 us each way) between hosts whose reads come late by up to
// 500 us without arrival times, as the lab's site connections: the
// samples scatter by hundreds of us around a fabric of 10 us. Held to the
// delay target (20 us) with the additive step shared among the paths,
// every window sat at one datagram (about 2000 delay cuts a second per
// path in the lab); a path between busy hosts (hostJitter) tolerates its
// scatter and grows on its own, so the windows cover the loop the late
// reads make.
func TestHostJitterWindowsLeaveTheFloor(t *testing.T) {
	const paths, dgram = 8, 9000
	s := newSim(t, lateSeed, 2, metaroce.Config{Paths: paths, MaxDatagram: dgram})
	cfg := simfabric.LinkConfig{Rate: 1.25e9, Delay: 5 * time.Microsecond, QueueBytes: 4 << 20}
	s.pair(0, 1, cfg, cfg, cfg, cfg, cfg, cfg, cfg, cfg)
	ca, cb := s.connect(0, 1)
	s.rx = newLateReader(lateSeed, 500*time.Microsecond, true)
	p := startPump(s, ca, cb, 256<<10, 8)
	s.runTo(s.fab.Now() + 100*time.Millisecond)
	_, ps := s.pathStats(0, ca)
	floor, cwnd := 0, 0
	var cuts int64
	for _, st := range ps {
		cwnd += st.Cwnd
		cuts += st.CutsDelay
		if st.Cwnd < 2*dgram {
			floor++
		}
	}
	t.Logf("messages %d, windows %d B in all, %d of %d paths under two datagrams, delay cuts %d, srtt %v fabric min %v",
		p.done, cwnd, floor, paths, cuts, ps[0].SRTT, ps[0].FabricMinRTT)
	require.Less(t, floor, paths/2, "most windows sit at the floor")
}
