package mrtransport

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkECMPGoodput measures one connection's goodput over 8 paths on 4
// ECMP links of 100 Mbit/s (newECMPPair, root only), with port re-picking
// off and on: each iteration builds a fresh world (fresh random ports),
// streams 4 MiB messages for 8 s and reports the goodput of the last 4 s
// (Mbit/s), the links the paths were hashed onto at the start, and the
// re-picks made (means over the worlds; min-Mbit/s the worst world's
// goodput). Run with -benchtime 8x: about a third of the worlds start
// with a link unused.
func BenchmarkECMPGoodput(b *testing.B) {
	for _, off := range []bool{true, false} {
		name := "repick=on"
		if off {
			name = "repick=off"
		}
		b.Run(name, func(b *testing.B) {
			p := newECMPPair(b, 4)
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(b.N)*30*time.Second)
			defer cancel()
			var mbit, linksAtStart, picks float64
			least := 1e9
			for range b.N {
				eps := p.world(ctx, Config{Paths: 8, Repick: RepickPolicy{Off: off}})
				a, c := eps[0].Addr().Paths, eps[1].Addr().Paths
				used := map[string]bool{}
				for i := range a {
					used[p.link(a[i].Port(), c[i].Port())] = true
				}
				src, dst := make([]byte, 4<<20), make([]byte, 4<<20)
				var moved, n0 int64
				var t0 time.Time
				start := time.Now()
				for i := uint32(0); time.Since(start) < 8*time.Second; i++ {
					if t0.IsZero() && time.Since(start) > 4*time.Second {
						t0, n0 = time.Now(), moved
					}
					r := eps[1].Recv(0, benchTag(9, i), dst)
					s := eps[0].Send(1, benchTag(9, i), src)
					_, err := r.Wait(ctx)
					require.NoError(b, err)
					_, err = s.Wait(ctx)
					require.NoError(b, err)
					moved += 4 << 20
				}
				g := float64(moved-n0) * 8 / time.Since(t0).Seconds() / 1e6
				mbit, least = mbit+g, min(least, g)
				linksAtStart += float64(len(used))
				made, _ := eps[0].Repicks()
				picks += float64(made)
				for _, ep := range eps {
					require.NoError(b, ep.Close())
				}
			}
			n := float64(b.N)
			b.ReportMetric(mbit/n, "Mbit/s")
			b.ReportMetric(least, "min-Mbit/s")
			b.ReportMetric(linksAtStart/n, "links-at-start")
			b.ReportMetric(picks/n, "repicks")
		})
	}
}
