package mrtransport

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective/collectivetest"
	"github.com/gocoll/gocoll/transport/metaroce"
)

func BenchmarkExpAllReduce(b *testing.B) {
	ack, _ := strconv.Atoi(os.Getenv("EXP_ACK"))
	paths, _ := strconv.Atoi(os.Getenv("EXP_PATHS"))
	size, _ := strconv.Atoi(os.Getenv("EXP_SIZE"))
	dt, _ := time.ParseDuration(os.Getenv("EXP_DT"))
	rto, _ := time.ParseDuration(os.Getenv("EXP_RTO"))
	ub, _ := strconv.Atoi(os.Getenv("EXP_UB"))
	cfg := Config{Paths: paths, Core: metaroce.Config{AckEvery: ack, DelayTarget: dt, MinRTO: rto, UnexpectedBytes: int64(ub)}}
	b.Run(fmt.Sprintf("ack=%d/paths=%d/ub=%d", ack, paths, ub), func(b *testing.B) {
		eps := newTestWorld(b, 4, cfg)
		collectivetest.BenchAllReduce(b, asTransport(eps), size)
		var st EngineStats
		var data, lost, tmo, dups, cuts, disc int64
		for _, ep := range eps {
			s := ep.Stats()
			st.DatagramsRead += s.Engine.DatagramsRead
			st.DatagramsPlaced += s.Engine.DatagramsPlaced
			st.ReadBatches += s.Engine.ReadBatches
			st.WriteBatches += s.Engine.WriteBatches
			st.DatagramsWritten += s.Engine.DatagramsWritten
			st.TimerRuns += s.Engine.TimerRuns
			for _, p := range s.Peers {
				disc += p.Conn.Discarded
				for _, ps := range p.Paths {
					st.ReadErrors += ps.Retransmits
					data += ps.PacketsSent
					lost += ps.PacketsLost
					tmo += ps.Timeouts
					dups += ps.DupsRecv
					cuts += ps.CutsDelay + ps.CutsLoss
				}
			}
		}
		b.Logf("total: data %d lost %d timeouts %d dups %d cuts %d discarded %d", data, lost, tmo, dups, cuts, disc)
		b.Logf("per op: read %d placed %d readcalls %d written %d writecalls %d timers %d retx %d", st.DatagramsRead/int64(b.N), st.DatagramsPlaced/int64(b.N), st.ReadBatches/int64(b.N), st.DatagramsWritten/int64(b.N), st.WriteBatches/int64(b.N), st.TimerRuns/int64(b.N), st.ReadErrors)
	})
}
