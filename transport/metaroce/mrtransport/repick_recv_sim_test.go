package mrtransport

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
	"github.com/gocoll/gocoll/transport/transporttest"
)

// The re-picks of a connection whose deciding end (the lower-ranked one)
// only receives: the ring's crossing 7 -> 0 in the two-site lab, where
// rank 0 decides for a connection it sends nothing on, so only the
// crowded rule (the paths' received rates) can move its paths.

// recvSimRun is one simulated connection's run: rank 1 streams 4 MiB
// messages to rank 0 (rank 0 to rank 1 with recvSimOpts.send) over 4
// links like ecmpSimLink.
type recvSimRun struct {
	start   []int    // the streaming rank's paths per link at the start
	cover   []int    // links carrying >= 5 % of each ecmpSimWindow's bytes of the stream
	repicks int64    // both ranks'
	byRank  [2]int64 // each rank's
}

// recvSimOpts configures recvSim.
type recvSimOpts struct {
	cfg Config
	// prelude, if positive, is an idle time before the stream, after a
	// 64 KiB message each way: the endpoint's first data (a job's set-up)
	// long before its bulk data.
	prelude time.Duration
	dur     time.Duration // the stream's length
	// want, if not nil, says whether a run that starts with this many of
	// rank 1's paths per link is wanted; recvSim runs nothing (ok false)
	// for one that is not.
	want func(start []int) bool
	log  *logLines // if not nil, receives the endpoints' re-pick lines
	// links is the number of ECMP links (0: 4).
	links int
	// gap, if positive, is a pause after each message of the stream.
	gap time.Duration
	// send, if set, reverses the stream: rank 0 (the deciding end)
	// streams to rank 1, so it sends what it decides on.
	send bool
}

// recvSim runs one seed of recvSimOpts in a synctest bubble of its own.
func recvSim(t *testing.T, seed uint64, o recvSimOpts) (run recvSimRun, ok bool) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), o.prelude+o.dur+time.Minute)
		defer cancel()
		cfg := o.cfg
		cfg.ListenAddr = netip.MustParseAddrPort("10.0.0.1:0") // not loopback: re-picks on
		cfg.MaxDatagram = 8972
		cfg.Core.IDSeed = seed | 1
		cfg.Paths = 8
		if o.log != nil {
			cfg.Logger = slog.New(slog.NewTextHandler(o.log, nil))
		}
		ecmp := &SimECMP{Links: cmp.Or(o.links, 4), Link: ecmpSimLink, Seed: seed}
		eps, net, err := NewSimWorld(ctx, 2, cfg, SimConfig{Fabric: simfabric.Config{Seed: int64(seed)}, ECMP: ecmp})
		if err != nil {
			t.Fatal(err)
		}
		defer net.Close()
		defer func() {
			for _, ep := range eps {
				_ = ep.Close()
			}
		}()
		src, dst := 1, 0
		if o.send {
			src, dst = 0, 1
		}
		from, to := eps[src].Addr().Paths, eps[dst].Addr().Paths
		run.start = make([]int, ecmp.Links)
		for i := range from {
			run.start[ecmp.ECMPLink(from[i], to[i])]++
		}
		if o.want != nil && !o.want(run.start) {
			return
		}
		ok = true
		xfer := func(src, dst int, tag transport.Tag, n int) {
			r := eps[dst].Recv(src, tag, make([]byte, n))
			s := eps[src].Send(dst, tag, make([]byte, n))
			if _, err := r.Wait(ctx); err != nil {
				t.Error(err)
			}
			if _, err := s.Wait(ctx); err != nil {
				t.Error(err)
			}
		}
		if o.prelude > 0 {
			xfer(0, 1, benchTag(8, 0), 64<<10)
			xfer(1, 0, benchTag(8, 1), 64<<10)
			time.Sleep(o.prelude)
		}
		begin := time.Now()
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := uint32(0); time.Since(begin) < o.dur && !t.Failed(); i++ {
				xfer(src, dst, benchTag(9, i), 4<<20)
				time.Sleep(o.gap)
			}
		}()
		prev := make([]int64, ecmp.Links)
		for at := ecmpSimWindow; at <= o.dur; at += ecmpSimWindow {
			time.Sleep(time.Until(begin.Add(at)))
			now := net.ECMPLinkBytes(src, dst)
			run.cover = append(run.cover, linksCarrying(prev, now))
			prev = now
		}
		<-done
		for i, ep := range eps {
			run.byRank[i], _ = ep.Repicks()
			run.repicks += run.byRank[i]
		}
	})
	return run, ok
}

// simSeeds is how many seeds a test of this file that bounds a count over
// seeds runs, and whether it judges that count: n and true; under the
// race detector raceSimSeeds and false. The race run needs a seed or two
// to run the re-pick code's goroutines (a bubble's) where the detector
// sees them, not a distribution: its 10x slower simulations made
// TestRepickShortJobFindsLinks alone 65 s (load 2-8) and, under heavy
// load, the race run's 10 m timeout (session 30). The plain run judges
// the counts. Checks a single run fails on are kept under both.
func simSeeds(n int) (seeds int, judged bool) {
	if transporttest.RaceSlowdown > 1 {
		return min(n, raceSimSeeds), false
	}
	return n, true
}

// raceSimSeeds is simSeeds' count under the race detector.
const raceSimSeeds = 2

// oneLinkUnused reports whether exactly one link has none of the paths.
func oneLinkUnused(start []int) bool {
	z := 0
	for _, n := range start {
		if n == 0 {
			z++
		}
	}
	return z == 1
}

// TestRepickEarlyPhaseWaitsForData starts a receiving connection on 3 of 4
// links with its bulk data 2.5 s after a first small message each way (as
// a job's set-up comes before its first large call), and fails unless,
// for at most 2 of 8 such seeds, the paths still leave a link unused 2.8 s
// into the bulk data: the early phase (fast re-picks) counts the time the
// connections carry data, not the time since the first data. With the
// phase's clock running from the first data (and the crowded rule's moves
// paced per connection, crowdPacer), 5 of these 8 seeds still left a link
// unused then; with busy time, 1 (seed 5, until 5.2 s, when it landed;
// seed 15 since the core's freeShare, 8ae153f: which seed is late moves
// with the core, the count is what the test bounds).
func TestRepickEarlyPhaseWaitsForData(t *testing.T) {
	const late, bound = 2, 2800 * time.Millisecond
	want, judged := simSeeds(8)
	by := int(bound/ecmpSimWindow) - 1
	var slow []uint64
	found := 0
	for seed := uint64(1); found < want; seed++ {
		if seed > 100 {
			t.Fatalf("only %d of 100 seeds start with one link unused", found)
		}
		r, ok := recvSim(t, seed, recvSimOpts{prelude: 2500 * time.Millisecond, dur: bound, want: oneLinkUnused})
		if !ok {
			continue
		}
		found++
		if len(r.cover) <= by || r.cover[by] < 4 {
			slow = append(slow, seed)
		}
		t.Logf("seed %d: paths per link at the start %v, links used per %v %v, %d re-picks", seed, r.start, ecmpSimWindow, r.cover, r.repicks)
	}
	if judged && len(slow) > late {
		t.Fatalf("seeds %v (of %d starting on 3 of 4 links) still left a link unused %v into the bulk data; want at most %d", slow, want, bound, late)
	}
}

// TestRecvSimTable prints, for RECV_SIM_SEEDS seeds that start on 3 of 4
// links (unset: skipped), the links rank 1's stream to rank 0 used per
// ecmpSimWindow over RECV_SIM_SECONDS (default 8): RECV_SIM_PRELUDE_MS
// sets recvSimOpts.prelude, RECV_SIM_EARLY=off turns the early phase off,
// RECV_SIM_LOG=1 logs the re-picks.
func TestRecvSimTable(t *testing.T) {
	seeds, _ := strconv.Atoi(os.Getenv("RECV_SIM_SEEDS"))
	if seeds <= 0 {
		t.Skip("RECV_SIM_SEEDS unset: a table of figures, not a check")
	}
	o := recvSimEnv(recvSimOpts{dur: 8 * time.Second, want: oneLinkUnused})
	if os.Getenv("RECV_SIM_EARLY") == "off" {
		o.cfg.Repick.Early = -1
	}
	recvSimSeeds(t, o, seeds, func(seed uint64, r recvSimRun) {
		t.Logf("seed %d: paths per link at the start %v, links used per %v %v, %d re-picks", seed, r.start, ecmpSimWindow, r.cover, r.repicks)
	})
}

// recvSimEnv returns o with the diagnostic tables' settings: dur from
// RECV_SIM_SECONDS (if set), prelude from RECV_SIM_PRELUDE_MS.
func recvSimEnv(o recvSimOpts) recvSimOpts {
	if s, _ := strconv.Atoi(os.Getenv("RECV_SIM_SECONDS")); s > 0 {
		o.dur = time.Duration(s) * time.Second
	}
	ms, _ := strconv.Atoi(os.Getenv("RECV_SIM_PRELUDE_MS"))
	o.prelude = time.Duration(ms) * time.Millisecond
	return o
}

// recvSimSeeds runs recvSim for the first seeds seeds whose runs o wants
// and hands each run to each, the diagnostic tables' loop; with
// RECV_SIM_LOG set each run's re-pick lines are logged.
func recvSimSeeds(t *testing.T, o recvSimOpts, seeds int, each func(seed uint64, r recvSimRun)) {
	found := 0
	for seed := uint64(1); found < seeds && seed < 1000; seed++ {
		if os.Getenv("RECV_SIM_LOG") != "" {
			o.log = &logLines{}
		}
		r, ok := recvSim(t, seed, o)
		if !ok {
			continue
		}
		found++
		if o.log != nil {
			t.Log(o.log.b.String())
		}
		each(seed, r)
	}
}

// logLines keeps the re-pick lines written to it.
type logLines struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := string(p); strings.Contains(s, "re-pick") || strings.Contains(s, "crowded") || strings.Contains(s, "behave") {
		l.b.Write(p)
	}
	return len(p), nil
}

// crowdedMoves runs recvSim for seeds 1 to 3 (simSeeds) on one ECMP
// link, where no port move can change a path's link, and returns each
// seed's count of crowded-rule moves (rank 0's "most crowded link" lines)
// in 10 s.
func crowdedMoves(t *testing.T, gap time.Duration) []int {
	var moves []int
	seeds, _ := simSeeds(3)
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		o := recvSimOpts{dur: 10 * time.Second, links: 1, gap: gap, log: &logLines{}}
		if _, ok := recvSim(t, seed, o); !ok {
			t.Fatalf("seed %d: no run", seed)
		}
		moves = append(moves, strings.Count(o.log.b.String(), "most crowded"))
	}
	return moves
}

// TestCrowdedMovesPacedOnOneLink checks the crowded rule's pacing
// (crowdPacer) as repickSample applies it: on one link the paths' shares
// stay unequal whatever their ports, and each move must double the wait
// before the next. Paced, each seed makes 8 moves in 10 s; with the pacer
// left out of repickSample, 15.
func TestCrowdedMovesPacedOnOneLink(t *testing.T) {
	const most = 11
	for i, n := range crowdedMoves(t, 0) {
		if n > most {
			t.Errorf("seed %d: %d crowded moves in 10 s on one link, want at most %d (is repickSample's crowdPacer bypassed?)", i+1, n, most)
		}
	}
}

// TestCrowdedRuleSkipsPausedWindows checks that repickSample judges only
// windows in which the connection carried data throughout (steadyLoad): a
// stream of 4 MiB messages 500 ms apart on one link leads to 9 moves in
// 10 s a seed with the gate, 14 without it.
func TestCrowdedRuleSkipsPausedWindows(t *testing.T) {
	const most = 11
	for i, n := range crowdedMoves(t, 500*time.Millisecond) {
		if n > most {
			t.Errorf("seed %d: %d crowded moves in 10 s with pauses, want at most %d (is repickSample's steadyLoad gate bypassed?)", i+1, n, most)
		}
	}
}

// coverTimes reads a run's cover (links used per ecmpSimWindow, of
// links): first is the end of the first window that used every link, -1
// if none did; settled is the end of the last window that did not (0 if
// every window used every link), -1 if the last one did not.
func coverTimes(cover []int, links int) (first, settled time.Duration) {
	first = -1
	for i, n := range cover {
		at := time.Duration(i+1) * ecmpSimWindow
		if n >= links {
			if first < 0 {
				first = at
			}
			continue
		}
		settled = at
	}
	if len(cover) > 0 && cover[len(cover)-1] < links {
		settled = -1
	}
	return first, settled
}

// TestRecvSimDistribution prints, for RECV_SIM_DIST seeds (unset:
// skipped) that start on 3 of 4 links, when the stream first used all 4
// links and when it last left one unused, from the first bulk byte, with
// the median, the largest and the runs that never used all 4 within 3 s:
// with the deciding end receiving (rank 1 streams to rank 0, the ring's
// 7 -> 0 crossing) and sending (RECV_SIM_SEND=1). RECV_SIM_PRELUDE_MS
// and RECV_SIM_SECONDS (default 5) as in TestRecvSimTable.
func TestRecvSimDistribution(t *testing.T) {
	seeds, _ := strconv.Atoi(os.Getenv("RECV_SIM_DIST"))
	if seeds <= 0 {
		t.Skip("RECV_SIM_DIST unset: a table of figures, not a check")
	}
	o := recvSimEnv(recvSimOpts{dur: 5 * time.Second, want: oneLinkUnused, send: os.Getenv("RECV_SIM_SEND") == "1"})
	var firsts []time.Duration
	never3, late1 := 0, 0
	recvSimSeeds(t, o, seeds, func(seed uint64, r recvSimRun) {
		first, settled := coverTimes(r.cover, 4)
		if first < 0 || first > 3*time.Second {
			never3++
			first = o.dur + ecmpSimWindow // sorts last
		}
		if settled < 0 || settled > time.Second {
			late1++
		}
		firsts = append(firsts, first)
		t.Logf("seed %d: start %v, all 4 first at %v, last short at %v, %d re-picks, cover %v", seed, r.start, first, settled, r.repicks, r.cover)
	})
	slices.Sort(firsts)
	t.Logf("send=%v prelude=%v: %d seeds, all 4 links first: median %v, max %v; never within 3 s: %d; a link unused after 1 s: %d",
		o.send, o.prelude, len(firsts), firsts[len(firsts)/2], firsts[len(firsts)-1], never3, late1)
}

// TestRepickShortJobFindsLinks streams one way over a connection that
// starts on 3 of 4 links, 2.5 s after a first small message each way (a
// job's set-up), for 16 such seeds with the deciding end receiving (the
// ring's 7 -> 0 crossing) and 16 with it sending, and fails if more than
// shortJobLate of the 32 still leave a link unused in the window ending
// 1.2 s into the bulk data (a short job's life), or if the receiving
// lower-ranked end moves a path itself: the sending end decides there
// (decides). Before the hand-off and the early phase's moves of several
// paths at once (pickMore), 7 of 32 left a link unused then (4 receiving,
// 3 sending; the receiving rank 0 made 8 or 9 re-picks a seed, the
// sender none; 7 in each of 3 runs); since, 2 to 4 (2, 2, 2, 3 and, in a
// CI run under load, 4: the bubble's goroutines are not run in one fixed
// order, so a seed's run is not the same bits every time). The bound sits
// between the two (TestRecvSimDistribution shows the whole distribution).
// Under the race detector, 2 seeds each way and no count (simSeeds).
func TestRepickShortJobFindsLinks(t *testing.T) {
	const shortJobLate, bound = 5, 1200 * time.Millisecond
	seeds, judged := simSeeds(16)
	by := int(bound/ecmpSimWindow) - 1
	var late []string
	for _, send := range []bool{false, true} {
		found := 0
		for seed := uint64(1); found < seeds; seed++ {
			if seed > 200 {
				t.Fatalf("send=%v: only %d of 200 seeds start with one link unused", send, found)
			}
			r, ok := recvSim(t, seed, recvSimOpts{prelude: 2500 * time.Millisecond, dur: bound, want: oneLinkUnused, send: send})
			if !ok {
				continue
			}
			found++
			if len(r.cover) <= by || r.cover[by] < 4 {
				late = append(late, fmt.Sprintf("send=%v seed %d", send, seed))
			}
			if !send && r.byRank[0] != 0 {
				t.Errorf("seed %d: the receiving end (rank 0) re-picked %d paths, the sending end %d; want only the sending end to", seed, r.byRank[0], r.byRank[1])
			}
			t.Logf("send=%v seed %d: paths per link at the start %v, links used per %v %v, re-picks by rank %v", send, seed, r.start, ecmpSimWindow, r.cover, r.byRank)
		}
	}
	if judged && len(late) > shortJobLate {
		t.Fatalf("%d of %d runs still left a link unused %v into the bulk data (%v); want at most %d", len(late), 2*seeds, bound, late, shortJobLate)
	}
}
