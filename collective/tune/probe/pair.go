package probe

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/gocoll/gocoll/collective"
)

// pairFigures is what measurePair finds: on p[0], the latency and the
// bandwidth; on both ends, the round trips and, if cpu, this end's CPU
// seconds over them and over the bulk transfers.
type pairFigures struct {
	latency, bandwidth float64
	pings              int
	cpu                bool
	pingCPU, bulkCPU   float64
	burstCPU           float64
	delayedCPU         float64
	pingTook           float64 // seconds, on p[0]
	burstTook          float64
	delayedTook        float64 // -1: not run
	coldLatency        float64 // seconds, on p[0]; 0: not run (coldLatency)
}

// maxPings bounds the round trips of one level past PingPongs.
const maxPings = 200

// measurePair runs the ping-pongs and the bulk transfer between p[0] and
// p[1] on both, and returns on p[0] the one-way latency (half the median
// round trip) and the bandwidth (the bulk's bytes over the fastest of
// bulkRuns transfers, less the fastest round trip, the acknowledgement's
// included: never above what the fastest transfer moved).
// The latency's median, not the fastest: in the two-site lab, loaded, an
// operation's WAN steps took 0.2-0.5 ms more than the fastest ping-pong's
// latency each (bench/results/model_lab), as a typical trip does. The
// bandwidth's fastest, not the median: it is the link's, and a transfer
// is only ever slowed below it (a process waiting for a core, a queue
// of another's), which the CPU term prices apart; the median of 3 put
// the lab's WAN at 5.9-97 MB/s at load 21-45 (bench/results/model_lab,
// session 16), 68-96 in a quiet window.
func measurePair(ctx context.Context, c *collective.Comm, p [2]int, opts Options) (pairFigures, error) {
	first := c.Rank() == p[0]
	peer := p[1]
	if !first {
		peer = p[0]
	}
	swap := pairSwap(ctx, c, p, first)
	// small[0] = 1 marks the last round trip: p[0] decides, p[1] sees it
	// in the ping it echoes.
	small := make([]byte, 8)
	rtts := make([]float64, 0, max(opts.PingPongs, maxPings))
	out := pairFigures{cpu: opts.CPUTime != nil, delayedTook: -1}
	cpu := func() float64 {
		if !out.cpu {
			return 0
		}
		return opts.CPUTime().Seconds()
	}
	// The bursts and the delayed ping-pongs run only as both ends agree.
	sleeps, err := agree(swap, first, opts, &out.cpu)
	if err != nil {
		return pairFigures{}, err
	}
	bulk := touchedBuffer(opts.BulkBytes) // before the CPU is read: see touchedBuffer
	cpu0 := cpu()
	begin := opts.Now()
	for n := 1; ; n++ {
		if first {
			small[0] = 0
			if n >= max(opts.PingPongs, maxPings) || n >= opts.PingPongs && opts.Now()-begin >= opts.PingBudget {
				small[0] = 1
			}
		}
		start := opts.Now()
		if err := swap(small, small); err != nil {
			return pairFigures{}, err
		}
		rtts = append(rtts, (opts.Now() - start).Seconds())
		if small[0] == 1 {
			break
		}
	}
	cpu1 := cpu()
	out.pingCPU, out.pings = cpu1-cpu0, len(rtts)
	slices.Sort(rtts)
	rtt := rtts[len(rtts)/2]
	if out.cpu { // the bursts (only for the CPU figures)
		burstBegin := opts.Now()
		out.pingTook = (burstBegin - begin).Seconds()
		if err := bursts(ctx, c, peer, first); err != nil {
			return pairFigures{}, err
		}
		cpu2 := cpu()
		out.burstCPU, out.burstTook, cpu1 = cpu2-cpu1, (opts.Now() - burstBegin).Seconds(), cpu2
		if sleeps {
			delayedBegin := opts.Now()
			trips, err := delayed(ctx, c, swap, small, peer, first, opts, max(pingDelay, time.Duration(rtt*1e9)))
			if err != nil {
				return pairFigures{}, err
			}
			cpu3 := cpu()
			out.delayedCPU, out.delayedTook, cpu1 = cpu3-cpu1, (opts.Now() - delayedBegin).Seconds(), cpu3
			if first {
				out.coldLatency = coldLatency(trips, rtt/2)
			}
		}
	}
	var tooks [bulkRuns]float64
	for i := range tooks {
		start := opts.Now()
		if err := swap(bulk, small); err != nil {
			return pairFigures{}, err
		}
		tooks[i] = (opts.Now() - start).Seconds()
	}
	out.bulkCPU = cpu() - cpu1
	slices.Sort(tooks[:])
	// The fastest bulk less the fastest round trip, a consistent pair: the
	// fastest bulk is the one least delayed, so charging it the median
	// trip's delay would take off more than its trip and put the figure
	// above the link (TestMeasureBandwidthNotAboveTheLink).
	out.latency, out.bandwidth = rtt/2, bulkBandwidth(opts.BulkBytes, tooks[0], rtts[0])
	return out, nil
}

// agree swaps the pair's settings over swap (see measurePair; first: this
// is p[0]): both ends
// must use the same BulkBytes (else an error naming both); the bursts run
// only where both ends read their CPU time (*cpu becomes false on both
// where one cannot: the level then has no CPU figures), and the delayed
// ping-pongs (sleeps) only where both can also sleep, so that both ends
// run the same messages.
func agree(swap func(out, in []byte) error, first bool, opts Options, cpu *bool) (sleeps bool, err error) {
	mine, theirs := make([]byte, 16), make([]byte, 16)
	binary.LittleEndian.PutUint64(mine, uint64(opts.BulkBytes))
	if *cpu {
		mine[8] |= 1
	}
	if opts.Sleep != nil {
		mine[8] |= 2
	}
	out, in := mine, theirs // swap sends out and receives in on p[0] (first)
	if !first {
		out, in = theirs, mine // and receives into out, then sends in, on p[1]
	}
	if err := swap(out, in); err != nil {
		return false, err
	}
	if bulk := binary.LittleEndian.Uint64(theirs); bulk != uint64(opts.BulkBytes) {
		return false, fmt.Errorf("BulkBytes %d here, %d at the peer: every rank must give the same Options", opts.BulkBytes, bulk)
	}
	both := mine[8] & theirs[8]
	*cpu = both&1 != 0
	return *cpu && both&2 != 0, nil
}

// bursts runs burstRuns bursts of burstLen small messages from p[0] (first)
// to p[1], each answered by one back. A burst's messages are posted at
// once (a send over a long link may wait for its acknowledgement), so
// that it waits about one round trip.
func bursts(ctx context.Context, c *collective.Comm, peer int, first bool) error {
	buf := make([]byte, 8*burstLen)
	handles := make([]*collective.Handle, burstLen)
	for range burstRuns {
		for i := range handles {
			if first {
				handles[i] = collective.SendAsync(ctx, c, buf[8*i:8*i+8], peer)
			} else {
				handles[i] = collective.RecvAsync(ctx, c, buf[8*i:8*i+8], peer)
			}
		}
		for _, h := range handles {
			if err := h.Wait(ctx); err != nil {
				return err
			}
		}
		answer := collective.Send[byte]
		if first {
			answer = collective.Recv[byte]
		}
		if err := answer(ctx, c, buf[:8], peer); err != nil {
			return err
		}
	}
	return nil
}

// bulkRuns is how many bulk transfers a level's bandwidth takes the
// fastest of: in the loaded lab, one 4 MiB transfer gave predictions of
// the same 4 MiB AllReduce 2-6x apart from run to run.
const bulkRuns = 3

// The delayed ping-pongs: delayedPings round trips of 8 bytes, p[1]
// answering each pingDelay or its median round trip after it arrives,
// the longer (so that a delayed trip is at least twice a ping-pong's: in
// the lab, 1 ms was not 1/4 of the WAN's 4.4 ms trip in 4 of 18 runs): a
// level's waiting rate where the bursts cannot tell it from a message's
// CPU (cpuCosts).
const (
	delayedPings = 8
	pingDelay    = time.Millisecond
)

// delayed runs the delayed ping-pongs over swap (p[0], first) and peer
// (p[1]) with small's 8 bytes: p[1] answers each ping delay after it
// arrives, and puts in its answer how long it held the ping (from its
// receive's return to its send, its sleep's wake-up included), in
// nanoseconds. It returns on p[0] each round trip less that hold, in
// seconds: a ping's trip and an answer's trip, the answer's receiver
// (p[0]) having waited through the delay.
func delayed(ctx context.Context, c *collective.Comm, swap func(out, in []byte) error, small []byte, peer int, first bool, opts Options, delay time.Duration) ([]float64, error) {
	var trips []float64
	if first {
		trips = make([]float64, 0, delayedPings)
	}
	for range delayedPings {
		if first {
			start := opts.Now()
			if err := swap(small, small); err != nil {
				return nil, err
			}
			hold := time.Duration(binary.LittleEndian.Uint64(small))
			trips = append(trips, (opts.Now() - start - hold).Seconds())
			continue
		}
		if err := collective.Recv(ctx, c, small, peer); err != nil {
			return nil, err
		}
		got := opts.Now()
		if err := opts.Sleep(ctx, delay); err != nil {
			return nil, err
		}
		binary.LittleEndian.PutUint64(small, uint64(opts.Now()-got))
		if err := collective.Send(ctx, c, small, peer); err != nil {
			return nil, err
		}
	}
	return trips, nil
}

// coldLatency is a level's cold latency (topology.Link.LatencyCold) from
// its delayed ping-pongs' trips (delayed): the median trip less a hot
// ping's one way (hot, the ping-pongs' latency), the answer's one way
// trip to a receiver that slept; at least hot, 0 without trips. The
// ping's receiver (p[1]) has waited only since its last answer, a trip
// (its spin may cover it); where it too sleeps (a long link, whose trip
// outlasts any spin) the figure also holds that wake-up, which the
// level's hot latency, measured by receivers that wait as long, already
// holds: there the two are about equal.
func coldLatency(trips []float64, hot float64) float64 {
	if len(trips) == 0 {
		return 0
	}
	trips = slices.Clone(trips)
	slices.Sort(trips)
	return max(hot, trips[len(trips)/2]-hot)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// A level's CPU per message comes from burstRuns bursts of burstLen small
// messages from p[0] to p[1], each answered by one back.
const (
	burstRuns = 3
	burstLen  = 16
)
