package mrtransport

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
)

// ecmpSimLink is one link of the simulated ECMP fabric: 100 Mbit/s, 2 ms
// one way, a 20 ms queue (the lab's links, at half the rate).
var ecmpSimLink = simfabric.LinkConfig{Rate: 12_500_000, Delay: 2 * time.Millisecond, QueueBytes: 250_000}

// ecmpSimRun is what one simulated connection did.
type ecmpSimRun struct {
	seed     uint64
	atStart  int     // links the paths were hashed onto at the start
	coverAt  []int   // links carrying >= 5 % of the bytes, per window, by window end (s)
	mbit     float64 // goodput of seconds 4-8
	repicks  int64
	firstAll time.Duration // when every link first carried >= 5 % of a window; -1: never
}

// ecmpSimInFlight is how many 4 MiB messages runECMPSim keeps in flight
// (TestECMPSimTable: ECMP_SIM_INFLIGHT; 1 unless set).
var ecmpSimInFlight = 1

// ecmpSimWindow is the window over which link use is judged.
const ecmpSimWindow = 200 * time.Millisecond

// runECMPSim streams 4 MiB messages from rank 0 to rank 1 for dur of
// virtual time over a simulated ECMP fabric of links links like link (hash
// seeded by seed) with cfg, and reports which links carried data when. It
// runs in a synctest bubble of its own.
func runECMPSim(t testing.TB, seed uint64, links int, link simfabric.LinkConfig, cfg Config, dur time.Duration) ecmpSimRun {
	var run ecmpSimRun
	synctest.Test(t.(*testing.T), func(t *testing.T) { run = ecmpSimBubble(t, seed, links, link, cfg, dur) })
	return run
}

func ecmpSimBubble(t testing.TB, seed uint64, links int, link simfabric.LinkConfig, cfg Config, dur time.Duration) ecmpSimRun {
	ctx, cancel := context.WithTimeout(context.Background(), dur+time.Minute)
	defer cancel()
	cfg.ListenAddr = netip.MustParseAddrPort("10.0.0.1:0") // not loopback: re-picks on, NIC defaults
	if cfg.MaxDatagram == 0 {
		cfg.MaxDatagram = 8972
	}
	cfg.Core.IDSeed = seed | 1
	ecmp := &SimECMP{Links: links, Link: link, Seed: seed}
	eps, net, err := NewSimWorld(ctx, 2, cfg, SimConfig{Fabric: simfabric.Config{Seed: int64(seed)}, ECMP: ecmp})
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	run := ecmpSimRun{seed: seed, firstAll: -1}
	a, b := eps[0].Addr().Paths, eps[1].Addr().Paths
	used := map[int]bool{}
	for i := range a {
		used[ecmp.ECMPLink(a[i], b[i])] = true
	}
	run.atStart = len(used)
	start := time.Now()
	var moved4, moved int64
	var mu sync.Mutex
	done := make(chan error, 1)
	go func() {
		k := max(1, ecmpSimInFlight)
		src, dst := make([]byte, 4<<20), make([][]byte, k)
		rs, ss := make([]transport.Request, k), make([]transport.Request, k)
		for j := range dst {
			dst[j] = make([]byte, 4<<20)
		}
		wait := func(j int) error { // message j's receive, then its send
			_, rerr := rs[j].Wait(ctx)
			if rerr != nil {
				return rerr
			}
			_, serr := ss[j].Wait(ctx)
			return serr
		}
		for i := uint32(0); time.Since(start) < dur || i%uint32(k) != 0; i++ {
			j := int(i) % k
			if i >= uint32(k) {
				if err := wait(j); err != nil {
					done <- err
					return
				}
			}
			rs[j] = eps[1].Recv(0, benchTag(9, i), dst[j])
			ss[j] = eps[0].Send(1, benchTag(9, i), src)
			if i < uint32(k) {
				continue
			}
			mu.Lock()
			moved += 4 << 20
			if time.Since(start) <= 4*time.Second {
				moved4 = moved
			}
			mu.Unlock()
		}
		for j := range k {
			if err := wait(j); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	prev := make([]int64, links)
	for at := ecmpSimWindow; at <= dur; at += ecmpSimWindow {
		time.Sleep(time.Until(start.Add(at)))
		now := net.ECMPLinkBytes(0, 1)
		n := linksCarrying(prev, now)
		prev = now
		run.coverAt = append(run.coverAt, n)
		if n == links && run.firstAll < 0 {
			run.firstAll = at
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	el := time.Since(start)
	mu.Lock()
	run.mbit = float64(moved-moved4) * 8 / (el - 4*time.Second).Seconds() / 1e6
	mu.Unlock()
	run.repicks, _ = eps[0].Repicks()
	for _, ep := range eps {
		_ = ep.Close()
	}
	net.Close()
	return run
}

// coverAt returns the links used in the window ending at d.
// linksCarrying counts the links that carried at least a twentieth of
// the bytes between two readings of the links' byte counters (prev and
// now, one entry a link): the links a connection's paths use, not those
// a stray datagram crossed. It is 0 when nothing was carried.
func linksCarrying(prev, now []int64) int {
	var total int64
	for l := range now {
		total += now[l] - prev[l]
	}
	n := 0
	for l := range now {
		if total > 0 && (now[l]-prev[l])*20 >= total {
			n++
		}
	}
	return n
}

func (r ecmpSimRun) cover(d time.Duration) int {
	i := int(d/ecmpSimWindow) - 1
	if i < 0 || i >= len(r.coverAt) {
		return 0
	}
	return r.coverAt[i]
}

// TestECMPSimTable prints, for ECMP_SIM_SEEDS seeds (unset: skipped), the
// share of connections whose paths use all 4 links of a simulated ECMP
// fabric after 1 s and after 8 s, and their goodput of seconds 4-8, for
// ECMP_SIM_PATHS paths (default DefaultPaths) with the default re-pick
// policy (ECMP_SIM_REPICK=off: none; ECMP_SIM_EARLY=off: no early phase),
// on links of ECMP_SIM_DELAY_MS one way (default 2; the queue at least a
// round trip's bytes), ECMP_SIM_INFLIGHT messages of 4 MiB in flight
// (default 1), for ECMP_SIM_SECONDS (default 8, at least 8).
func TestECMPSimTable(t *testing.T) {
	seeds, _ := strconv.Atoi(os.Getenv("ECMP_SIM_SEEDS"))
	if seeds <= 0 {
		t.Skip("ECMP_SIM_SEEDS unset: the table takes minutes")
	}
	paths, _ := strconv.Atoi(os.Getenv("ECMP_SIM_PATHS"))
	if paths == 0 {
		paths = DefaultPaths
	}
	cfg := Config{Paths: paths, Repick: RepickPolicy{Off: os.Getenv("ECMP_SIM_REPICK") == "off"}}
	if os.Getenv("ECMP_SIM_EARLY") == "off" {
		cfg.Repick.Early = -1
	}
	link := ecmpSimLink
	if ms, err := strconv.Atoi(os.Getenv("ECMP_SIM_DELAY_MS")); err == nil && ms >= 0 {
		link.Delay = time.Duration(ms) * time.Millisecond
		link.QueueBytes = max(link.QueueBytes, int(link.Rate*int64(2*link.Delay)/int64(time.Second))) // a BDP of queue, as the lab's
	}
	if k, err := strconv.Atoi(os.Getenv("ECMP_SIM_INFLIGHT")); err == nil && k > 0 {
		ecmpSimInFlight = k
		defer func() { ecmpSimInFlight = 1 }()
	}
	dur := 8 * time.Second
	if s, err := strconv.Atoi(os.Getenv("ECMP_SIM_SECONDS")); err == nil && s >= 8 {
		dur = time.Duration(s) * time.Second
	}
	const links = 4
	var all1, all8, start4 int
	var mbit, least float64 = 0, 1e9
	var repicks int64
	for seed := range uint64(seeds) {
		r := runECMPSim(t, seed, links, link, cfg, dur)
		t.Logf("seed %d: links at start %d, used per 200 ms %v, first all %v, %.0f Mbit/s, %d re-picks", seed, r.atStart, r.coverAt, r.firstAll, r.mbit, r.repicks)
		if r.cover(time.Second) == links {
			all1++
		}
		if r.cover(dur) == links {
			all8++
		}
		if r.atStart == links {
			start4++
		}
		mbit += r.mbit
		least = min(least, r.mbit)
		repicks += r.repicks
	}
	n := float64(seeds)
	fmt.Printf("ecmp-sim paths=%d repick=%v early=%v delay=%v inflight=%d seeds=%d: all 4 links at start %.0f %%, after 1 s %.0f %%, after %v %.0f %%; goodput 4 s-end mean %.1f min %.1f Mbit/s (of 400); re-picks %.1f\n",
		cfg.Paths, !cfg.Repick.Off, cfg.Repick.Early >= 0, link.Delay, ecmpSimInFlight, seeds, 100*float64(start4)/n, 100*float64(all1)/n, dur, 100*float64(all8)/n, mbit/n, least, float64(repicks)/n)
}

// TestEarlyRepickFindsLinks runs connections of 8 paths that the
// simulated ECMP fabric hashed onto 3 of its 4 links (seeds tried in order
// until 12 such) for 2 s: in most (about 8 in 10), the early re-pick phase
// has every link carrying data in the window ending at 1.2 s; half is
// asked. Without it (Early: -1) no re-pick is decided before 1 s, and
// about 1 in 4 are found by 1.2 s (3 of 12 in a run).
func TestEarlyRepickFindsLinks(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 12 simulated connections of 2 s")
	}
	const links, want, need = 4, 12, 6
	found, tried := 0, 0
	var late []uint64
	for seed := uint64(1000); found < want; seed++ {
		tried++
		if tried > 60 {
			t.Fatalf("only %d of %d seeds from 1000 start with a link unused", found, tried)
		}
		r := runECMPSim(t, seed, links, ecmpSimLink, Config{Paths: 8}, 2*time.Second)
		if r.atStart == links {
			continue
		}
		found++
		if r.cover(1200*time.Millisecond) < links {
			late = append(late, seed)
		}
		t.Logf("seed %d: links at start %d, used per 200 ms %v, %d re-picks", seed, r.atStart, r.coverAt, r.repicks)
	}
	if len(late) > want-need {
		t.Fatalf("seeds %v (of %d with a link unused at the start) still left a link unused at 1.2 s; want at most %d", late, want, want-need)
	}
}
