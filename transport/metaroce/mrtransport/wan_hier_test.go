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

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
)

// TestWANSimHierarchical prints, for WAN_SIM_SEEDS seeds (unset: skipped),
// issue 14's lab AllReduce in virtual time with everything but the CPU:
// the real hierarchical AllReduce (collective.AlgoHierarchical) of
// WAN_SIM_BYTES (default 16 MiB) of float32 on 2 sites x 2 hosts x 2
// ranks, every rank a MetaRoCE endpoint, the sites joined by 4 shared
// ECMP links of 200 Mbit/s, 2 ms, 20 ms of queue, ranks of a site by links
// of no rate limit and 20 us (the lab's shared memory and LAN, which cost
// CPU there, cost nothing here), WAN_SIM_CALLS calls (default 6): each
// call's busbw as a share of the hierarchical WAN bound (each site receives
// S bytes over the 4 links). WAN_SIM_ALGO=ring runs the flat ring instead,
// against its own bound (1.75 S through one crossing each way). With TestWANSimTable (the WAN phase alone)
// and `gocoll sim` (an ideal transport), it splits the lab's shortfall:
// algorithm, transport, and the lab's CPU (bench/results/wan_gap.md).
// WAN_SIM_PRIORITY=1 serves MetaRoCE's control datagrams first
// (SimECMP.Priority at Config.ControlDSCP), as the lab's priority band.
// WAN_SIM_SERIES=conns logs, per call, when each of the 8 cross-site
// connections delivered its last byte, their spread, and where site 0's
// paths to site 1 lie on the links after the call (each link's total and
// each connection's paths per link); each seed's line then counts the
// port re-picks made and undone, and the line ends with the totals per
// link from site 1 to 0; WAN_SIM_SERIES=paths logs instead, per call, each
// of site 0's WAN paths' link, the paths on that link in all and the kB
// the path carried. WAN_SIM_SERIES5=1 adds each
// connection's delivery rate per 5 ms of each call.
// WAN_SIM_BALANCED=1 places every connection's paths evenly over the
// links (SimECMP.Balanced, a diagnostic); WAN_SIM_PLACE=skew gives every
// link the same number of paths but each connection 4, 2, 1 and 1 of its
// 8 (SimECMP.Place); WAN_SIM_PLACE=near puts 9, 8, 8, 7 paths on the
// links each way (ranks 0 and 4 put one path of link 3 on link 0);
// WAN_SIM_HASHLOCAL=1 keeps the hash within a site under either
// (SimECMP.HashLocal); WAN_SIM_PATHS sets Config.Paths,
// WAN_SIM_REPICK=off turns port re-picks off; WAN_SIM_ACKROOM=on sets
// Config.AckRoom (pieces leave room for an ACK); WAN_SIM_REPICK_FASTER,
// _CORR, _CROWDED, _CROWDWIN, _EARLY_MS, _EARLYINT_MS and _EARLYWIN set RepickPolicy's Faster,
// Correlation, Crowded, CrowdedWindow, Early, EarlyInterval and EarlyWindow (unset: defaults).
// WAN_SIM_PATHLOG=1 logs every 50 ms of each call, for each rank's
// connection to its WAN peer (rank r to r+4 mod 8), the message bytes
// completed and each path's state, window and bytes in flight (KB),
// timeouts, resends and smoothed RTT (ms).
// WAN_SIM_ALGO also takes any other algorithm's name (collective.ParseAlgorithm),
// e.g. tree (against its own bound: 2 S each way on this grid) or
// recursive-doubling; WAN_SIM_TIMES=1 adds each call's time (ms) to its
// seed's line; WAN_SIM_TRACE=1 logs, every 2 ms of each call, the kB each
// cross-site connection delivered (src>dst:kB).
// WAN_SIM_MBIT sets the WAN links' rate (default 200 Mbit/s; the queue
// 20 ms of it, as the lab's); WAN_SIM_DELAY_US their one-way delay
// (default 2 ms). WAN_SIM_CHANNELS sets Config.Channels (the ring's and
// the trees'; unset: the model's choice).
// WAN_SIM_SAMPLES=PREFIX turns the send sampler on (Config.SendSamples):
// each rank writes PREFIX.SEED.RANK, and each call's start is logged in
// virtual Unix ns (bench/results/mr_samples/classify.py --sim reads them).
// WAN_SIM_LOCAL_MBS gives the ranks of a site (their shared memory and
// LAN in the lab) 4 links of that many MB/s, shared by all the site's
// traffic, with 4 MiB of queue (unset: no rate limit): the lab's
// shared-memory and LAN phases take time on its busy cores, where the
// WAN idles unless pieces overlap them.
// WAN_SIM_TIMER_US makes every engine timer set for later than now wait at
// least that long (1000: Go's netpoll rounding, which an idle rank of the
// lab sees; the sim's timers are otherwise exact). Each seed's line ends
// with counts over all ranks: the WAN paths' resends and timeouts
// (spurious ones too), datagrams per socket write, and per DATA
// packet sent the datagrams written, read batches and timer runs.
func TestWANSimHierarchical(t *testing.T) {
	seeds, _ := strconv.Atoi(os.Getenv("WAN_SIM_SEEDS"))
	if seeds <= 0 {
		t.Skip("WAN_SIM_SEEDS unset: a table of figures, not a check")
	}
	size, _ := strconv.Atoi(os.Getenv("WAN_SIM_BYTES"))
	if size <= 0 {
		size = 16 << 20
	}
	calls, _ := strconv.Atoi(os.Getenv("WAN_SIM_CALLS"))
	if calls <= 0 {
		calls = 6
	}
	const n, links = 8, 4
	tp := labTopology(t)
	algo, name, crossing := collective.AlgoHierarchical, "hierarchical", 1.0
	switch a := os.Getenv("WAN_SIM_ALGO"); a {
	case "", "hierarchical":
	case "ring":
		// A flat ring of 8 crosses the WAN once each way (3 -> 4, 7 -> 0),
		// carrying 2(n-1)/n S = 1.75 S through one connection.
		algo, name, crossing = collective.AlgoRing, "ring", 1.75
	case "tree":
		// The double binary tree over ranks 0-7 (sites 0-3, 4-7): each
		// tree has two cross-site edges, each carrying the tree's half
		// up one way and down the other: 2 S each way (WAN_SIM_TRACE
		// shows 4 connections of S/2 a direction).
		algo, name, crossing = collective.AlgoTree, "tree", 2.0
	default: // any other algorithm, against the hierarchical's bound
		var err error
		if algo, err = collective.ParseAlgorithm(a); err != nil {
			t.Fatalf("WAN_SIM_ALGO: %v", err)
		}
		name = a
	}
	wan := wanSimLink
	if mbit, _ := strconv.Atoi(os.Getenv("WAN_SIM_MBIT")); mbit > 0 {
		// The lab's RATE: its queue stays 20 ms of the rate (gocoll lab's --queue-ms).
		wan.Rate = int64(mbit) * 1e6 / 8
		wan.QueueBytes = int(wan.Rate / 50)
	}
	if us, _ := strconv.Atoi(os.Getenv("WAN_SIM_DELAY_US")); us > 0 {
		wan.Delay = time.Duration(us) * time.Microsecond
	}
	bound := time.Duration(crossing * float64(size) / float64(links*wan.Rate) * float64(time.Second))
	if mb, _ := strconv.Atoi(os.Getenv("WAN_SIM_LOCAL_MBS")); mb > 0 {
		// The ranks know the fabric's figures, as the lab's probe gives
		// them (the hierarchical pieces' ramp reads them: tune.HierRamp).
		local := topology.Link{Latency: 20 * time.Microsecond, Bandwidth: float64(mb) * 1e6}
		far := topology.Link{Latency: wan.Delay, Bandwidth: float64(wan.Rate), Lanes: links}
		tp.Links = &topology.Links{Host: &local, Site: &local, WAN: &far}
	}
	for seed := range uint64(seeds) {
		seed++
		var took []time.Duration
		var written, writes, readBatches, timerRuns, dataSent, repicks, undone, wanRetx, wanTimeouts, wanSpurious int64
		tally := &wanBytes{site: func(r int) int { return r / 4 }}
		var drops int64
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			local := simfabric.LinkConfig{Delay: 20 * time.Microsecond}
			if mb, _ := strconv.Atoi(os.Getenv("WAN_SIM_LOCAL_MBS")); mb > 0 {
				local.Rate, local.QueueBytes = int64(mb)*1e6, 4<<20
			}
			ecmp := &SimECMP{Links: links, Link: wan, Seed: seed, Site: func(r int) int { return r / 4 }, Local: &local}
			if os.Getenv("WAN_SIM_PRIORITY") == "1" {
				ecmp.Priority = DefaultControlDSCP // the lab's band for the control class
			}
			ecmp.Balanced = os.Getenv("WAN_SIM_BALANCED") == "1"
			ecmp.HashLocal = os.Getenv("WAN_SIM_HASHLOCAL") == "1"
			if os.Getenv("WAN_SIM_PLACE") == "near" {
				// Totals 9 8 8 7 per link each way: rank 0 and 4 put
				// their last path on link 0 instead of 3, the others 2
				// per link.
				ecmp.Place = func(rank, path int) int {
					if rank%4 == 0 && path == 7 {
						return 0
					}
					return path
				}
			}
			if os.Getenv("WAN_SIM_PLACE") == "skew" {
				// Every link carries 8 of the 32 paths each way, but each
				// rank's 8 paths lie 4, 2, 1, 1 on the links (rotated by
				// rank): equal totals per link, unequal per connection.
				ecmp.Place = func(rank, path int) int { return []int{0, 0, 0, 0, 1, 1, 2, 3}[path%8] + rank }
			}
			cfg := Config{ListenAddr: netip.MustParseAddrPort("10.0.0.1:0"), MaxDatagram: 8972}
			cfg.Core.IDSeed = seed | 1
			cfg.Paths, _ = strconv.Atoi(os.Getenv("WAN_SIM_PATHS"))
			cfg.Repick.Off = os.Getenv("WAN_SIM_REPICK") == "off"
			cfg.AckRoom = os.Getenv("WAN_SIM_ACKROOM") == "on" // pieces leave room for an ACK
			cfg.Repick.Faster, _ = strconv.ParseFloat(os.Getenv("WAN_SIM_REPICK_FASTER"), 64)
			cfg.Repick.Correlation, _ = strconv.ParseFloat(os.Getenv("WAN_SIM_REPICK_CORR"), 64)
			cfg.Repick.Crowded, _ = strconv.ParseFloat(os.Getenv("WAN_SIM_REPICK_CROWDED"), 64)
			cfg.Repick.CrowdedWindow, _ = strconv.Atoi(os.Getenv("WAN_SIM_REPICK_CROWDWIN"))
			ms := func(name string) time.Duration {
				v, _ := strconv.Atoi(os.Getenv(name))
				return time.Duration(v) * time.Millisecond
			}
			cfg.Repick.Early, cfg.Repick.EarlyInterval = ms("WAN_SIM_REPICK_EARLY_MS"), ms("WAN_SIM_REPICK_EARLYINT_MS")
			cfg.Repick.EarlyWindow, _ = strconv.Atoi(os.Getenv("WAN_SIM_REPICK_EARLYWIN"))
			if p := os.Getenv("WAN_SIM_SAMPLES"); p != "" { // the send sampler's files: p.SEED.RANK
				cfg.SendSamples = fmt.Sprintf("%s.%d", p, seed)
			}
			if us, _ := strconv.Atoi(os.Getenv("WAN_SIM_TIMER_US")); us > 0 {
				timerGranularity.Store(int64(time.Duration(us) * time.Microsecond))
				defer timerGranularity.Store(0)
			}
			eps, net, err := NewSimWorld(ctx, n, cfg, SimConfig{Fabric: simfabric.Config{Seed: int64(seed)}, ECMP: ecmp, Tap: tally.tap})
			if err != nil {
				t.Fatal(err)
			}
			defer net.Close()
			comms := make([]*collective.Comm, n)
			for r, ep := range eps {
				channels, _ := strconv.Atoi(os.Getenv("WAN_SIM_CHANNELS"))
				if comms[r], err = collective.New(ep, 1, collective.Config{AllReduce: algo, Topology: &tp, Channels: channels}); err != nil {
					t.Fatal(err)
				}
			}
			bufs := make([][]float32, n)
			for r := range bufs {
				bufs[r] = make([]float32, size/4)
			}
			var spreads []wanSpread
			acked := make(map[[2]int]int64)
			var places []string
			for range calls {
				start := time.Now()
				if cfg.SendSamples != "" {
					t.Logf("seed %d call %d starts at %d (Unix ns, virtual)", seed, len(took), start.UnixNano())
				}
				stop := make(chan struct{})
				spread := make(chan wanSpread, 1)
				go func() { spread <- sampleWANFinish(eps, start, stop) }()
				if os.Getenv("WAN_SIM_PATHLOG") != "" {
					go func() {
						for {
							select {
							case <-stop:
								return
							case <-time.After(50 * time.Millisecond):
							}
							for r := range 8 {
								for _, ps := range eps[r].Stats().Peers {
									if ps.Rank != (r+4)%8 {
										continue
									}
									line := fmt.Sprintf("t=%4.0fms %d->%d sent %d:", time.Since(start).Seconds()*1e3, r, ps.Rank, ps.Conn.BytesSent)
									for _, pa := range ps.Paths {
										line += fmt.Sprintf(" [%v w%d f%d to%d rx%d srtt%.1f]", pa.State, pa.Cwnd/1000, pa.Inflight/1000, pa.Timeouts, pa.Retransmits, pa.SRTT.Seconds()*1e3)
									}
									t.Log(line)
								}
							}
						}
					}()
				}
				if os.Getenv("WAN_SIM_TRACE") != "" {
					go traceWAN(t, eps, start, stop)
				}
				var wg sync.WaitGroup
				errs := make([]error, n)
				for r, c := range comms {
					wg.Go(func() { errs[r] = collective.AllReduce(ctx, c, bufs[r], bufs[r], collective.Sum) })
				}
				wg.Wait()
				for r, err := range errs {
					if err != nil {
						t.Fatalf("seed %d rank %d: %v", seed, r, err)
					}
				}
				took = append(took, time.Since(start))
				close(stop)
				spreads = append(spreads, <-spread)
				places = append(places, wanPlacement(eps, ecmp))
				if os.Getenv("WAN_SIM_SERIES") == "paths" {
					t.Logf("seed %d call %d: %s", seed, len(places)-1, wanPathRates(eps, ecmp, acked))
				}
				time.Sleep(20 * time.Millisecond)
			}
			for i, sp := range spreads {
				if os.Getenv("WAN_SIM_SERIES") == "conns" {
					t.Logf("seed %d call %d: %s; %s", seed, i, sp, places[i])
					if os.Getenv("WAN_SIM_SERIES5") == "1" {
						for c := range 8 {
							line := fmt.Sprintf("  conn %d MB/s per 5 ms:", c)
							for _, b := range sp.per5ms[c] {
								line += fmt.Sprintf(" %.0f", float64(b)/5e-3/1e6)
							}
							t.Log(line)
						}
					}
				}
			}
			for _, ep := range eps {
				m, u := ep.Repicks()
				repicks, undone = repicks+m, undone+u
				all := ep.Stats()
				st := all.Engine
				written, writes = written+st.DatagramsWritten, writes+st.WriteBatches
				readBatches, timerRuns = readBatches+st.ReadBatches, timerRuns+st.TimerRuns
				for _, ps := range all.Peers {
					for _, pa := range ps.Paths {
						dataSent += pa.PacketsSent
						if ps.Rank/4 != ep.Rank()/4 { // a WAN path
							wanRetx, wanTimeouts, wanSpurious = wanRetx+pa.Retransmits, wanTimeouts+pa.Timeouts, wanSpurious+pa.SpuriousTimeouts
						}
					}
				}
			}
			fs := net.Stats()
			for _, l := range fs.Links {
				drops += l.DroppedQueueFull.Packets
			}
			for d := range 2 {
				net.mu.Lock()
				ls := net.ecmp.links[[2]int{d, 1 - d}]
				net.mu.Unlock()
				for _, id := range ls {
					tally.dir[d].dropped += fs.Links[id].Dropped().Packets
					tally.dir[d].droppedBytes += fs.Links[id].Dropped().Bytes
				}
			}
			for r, ep := range eps {
				for _, ps := range ep.Stats().Peers {
					if ps.Rank/4 != r/4 {
						tally.dir[ps.Rank/4].arrived += ps.Conn.BytesArrived
					}
				}
			}
			for _, c := range comms {
				_ = c.Close()
			}
			for _, ep := range eps {
				_ = ep.Close()
			}
		})
		line := fmt.Sprintf("seed %d: %s AllReduce of %d B, its WAN bound %.1f ms; calls (%% of bound):", seed, name, size, bound.Seconds()*1e3)
		var sum float64
		for _, d := range took {
			line += fmt.Sprintf(" %.0f%%", 100*bound.Seconds()/d.Seconds())
			if os.Getenv("WAN_SIM_TIMES") != "" {
				line += fmt.Sprintf(" (%.3f ms)", d.Seconds()*1e3)
			}
			sum += bound.Seconds() / d.Seconds()
		}
		perData := func(n int64) float64 { return float64(n) / float64(max(dataSent, 1)) }
		t.Logf("%s; mean %.1f %%; %d port re-picks, %d undone; WAN paths: %d resent, %d timeouts (%d spurious); %.2f datagrams per socket write; per DATA packet: %.2f datagrams written, %.2f read batches, %.2f timer runs",
			line, 100*sum/float64(len(took)), repicks, undone, wanRetx, wanTimeouts, wanSpurious, float64(written)/float64(max(writes, 1)), perData(written), perData(readBatches), perData(timerRuns))
		// WAN/S as bench/hier_lab.sh prints it (the lab's router counters
		// count IP, UDP and Ethernet headers too), split into its parts;
		// the handshake's datagrams are in it, as the lab's are.
		s := crossing * float64(size) * float64(calls)
		for d := range tally.dir {
			t.Logf("seed %d: WAN/S site %d -> %d: %s; queue drops (every link, both ways) %d", seed, d, 1-d, tally.dir[d].split(s), drops)
		}
	}
}

// wanSpread is when, in one call, each of the 8 cross-site connections
// (site 0's rank r to r+4, then back) delivered its last byte, from the
// call's start.
type wanSpread struct {
	at [8]time.Duration
	// per5ms is each connection's bytes delivered in each 5 ms of the
	// call.
	per5ms [8][]int64
}

func (w wanSpread) String() string {
	lo, hi := w.at[0], w.at[0]
	b := "WAN connections done at (ms, 0->4 1->5 2->6 3->7 | 4->0 ...):"
	for i, d := range w.at {
		if i == 4 {
			b += " |"
		}
		b += fmt.Sprintf(" %.0f", d.Seconds()*1e3)
		lo, hi = min(lo, d), max(hi, d)
	}
	return b + fmt.Sprintf("; spread %.0f ms", (hi-lo).Seconds()*1e3)
}

// sampleWANFinish samples, every 500 us until stop, the bytes each
// cross-site connection of the 8 ranks (sites of 4) has placed at its
// receiver, and returns when each last grew.
func sampleWANFinish(eps []*Endpoint, start time.Time, stop <-chan struct{}) wanSpread {
	var last [8]int64
	var seen [8]bool
	var at wanSpread
	for {
		slot := int(time.Since(start) / (5 * time.Millisecond))
		for i := range 8 {
			src, dst := i, i+4
			if i >= 4 {
				src, dst = i, i-4
			}
			for _, ps := range eps[dst].Stats().Peers {
				if ps.Rank == src && ps.Conn.BytesArrived != last[i] {
					for len(at.per5ms[i]) <= slot {
						at.per5ms[i] = append(at.per5ms[i], 0)
					}
					if seen[i] {
						at.per5ms[i][slot] += ps.Conn.BytesArrived - last[i]
					}
					last[i], at.at[i] = ps.Conn.BytesArrived, time.Since(start)
				}
				if ps.Rank == src {
					seen[i] = true
				}
			}
		}
		select {
		case <-stop:
			return at
		case <-time.After(500 * time.Microsecond):
		}
	}
}

// wanPlacement describes where the paths from site 0 (ranks 0-3) to site 1
// (ranks 4-7) lie on ecmp's links after a call: each link's total, then
// each connection's paths per link.
func wanPlacement(eps []*Endpoint, ecmp *SimECMP) string {
	total := make([]int, ecmp.Links)
	per := ""
	for src := range 4 {
		dst := src + 4
		mine := make([]int, ecmp.Links)
		for path := range eps[src].cfg.Paths {
			l := ecmp.ECMPLink(eps[src].eng.sock(path).LocalAddr(), eps[dst].eng.sock(path).LocalAddr())
			if ecmp.Place != nil || ecmp.Balanced {
				continue
			}
			mine[l]++
			total[l]++
		}
		per += fmt.Sprint(" ", mine)
	}
	back := make([]int, ecmp.Links)
	for src := 4; src < 8 && ecmp.Place == nil && !ecmp.Balanced; src++ {
		for path := range eps[src].cfg.Paths {
			back[ecmp.ECMPLink(eps[src].eng.sock(path).LocalAddr(), eps[src-4].eng.sock(path).LocalAddr())]++
		}
	}
	return fmt.Sprintf("paths 0->1 per link %v, per connection%s; 1->0 per link %v", total, per, back)
}

// wanPathRates describes, for each connection from site 0 (ranks 0-3) to
// site 1, each path's link, the paths on that link in all, and the bytes
// the path had acknowledged since the last call (kB; acked holds the
// counts by rank and path between calls).
func wanPathRates(eps []*Endpoint, ecmp *SimECMP, acked map[[2]int]int64) string {
	links := make([][]int, 4)
	total := make([]int, ecmp.Links)
	for src := range 4 {
		for path := range eps[src].cfg.Paths {
			l := ecmp.ECMPLink(eps[src].eng.sock(path).LocalAddr(), eps[src+4].eng.sock(path).LocalAddr())
			links[src] = append(links[src], l)
			total[l]++
		}
	}
	out := fmt.Sprint("links ", total, ", per path link/on link/kB:")
	for src := range 4 {
		out += fmt.Sprintf(" |%d>%d", src, src+4)
		for _, ps := range eps[src].Stats().Peers {
			if ps.Rank != src+4 {
				continue
			}
			for path, pa := range ps.Paths {
				k := [2]int{src, path}
				l := links[src][path]
				out += fmt.Sprintf(" %d/%d/%d", l, total[l], (pa.BytesAcked-acked[k])/1000)
				acked[k] = pa.BytesAcked
			}
		}
	}
	return out
}

// traceWAN logs, every 2 ms until stop, the kB each cross-site connection
// of the 8 ranks (sites of 4) delivered since the last line (WAN_SIM_TRACE).
func traceWAN(t *testing.T, eps []*Endpoint, start time.Time, stop <-chan struct{}) {
	last := map[[2]int]int64{}
	sample := func(line *string) {
		for d := range eps {
			for _, ps := range eps[d].Stats().Peers {
				k := [2]int{ps.Rank, d}
				if ps.Rank/4 == d/4 {
					continue
				}
				if v := ps.Conn.BytesArrived - last[k]; v > 0 && line != nil {
					*line += fmt.Sprintf(" %d>%d:%d", ps.Rank, d, v/1000)
				}
				last[k] = ps.Conn.BytesArrived
			}
		}
	}
	sample(nil)
	for {
		select {
		case <-stop:
			return
		case <-time.After(2 * time.Millisecond):
		}
		line := fmt.Sprintf("t=%4.0fms", time.Since(start).Seconds()*1e3)
		sample(&line)
		t.Log(line)
	}
}
