//go:build linux

package shm

import (
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// A balancer spreads the spinning ranks of an oversubscribed host over its
// processors. With more ranks than processors, unbound, the scheduler may
// settle them unevenly for a whole run (4 ranks on 2 cores: 3 on one and
// 1 on the other), where every collective step then waits for the ranks
// that share a core while the lone one spins, its yields returning at once
// with nobody to yield to: a 1 MiB AllToAll took 220-290 us a call in that
// state against 160-190 in the even one (bench/results/shm_large.md,
// session 17). The scheduler does not mend it: the crowded ranks are
// cache-hot, the lone core never idle.
//
// So each rank publishes in its segment, while it spins and while it
// copies, the processor it runs on, when, and its thread (offCPU, offTID).
// Every balanceLook of spinning it reads its peers' and, where one
// processor runs at least two more of the host's recently active ranks
// than another, even were every rank not recently seen on the other
// (balanceMove), at two looks in a row, it moves the highest
// rank of the crowded one to the other: it binds that rank's thread to the
// target processor, which migrates it (a thread that runs or waits to run;
// a sleeping one is placed anew when it wakes), and at once restores the
// thread's affinity mask, so that nothing stays bound and the scheduler
// may move it again. The rank that sees it first is the one with time to
// spare: a lone one spins, the crowded ones wait for a turn. A rank moves
// another at most once per balanceQuiet, and writes the moved rank's new
// processor in its word.
type balancer struct {
	e     *Endpoint
	cpus  []int  // the processors this rank's thread could run on at Connect
	polls int    // since the last clock read
	next  int64  // next look (unix nanoseconds)
	quiet int64  // no move before this
	seen  [2]int // the move the last look found (rank, processor), or -1s
	// samples is look's, kept for the next look.
	samples []cpuSample
	noted   atomic.Int64 // when note last published (unix nanoseconds)
	moves   atomic.Int64
	// noteNowFn is noteNow, made once: readRemote calls it after each
	// system call of a copy (chunkHook).
	noteNowFn func()
}

const (
	// balanceLook is the time between two looks of a spinning rank, and
	// between two notes (a note is a gettid system call, 1-5 us in the
	// virtual machine this was measured on, and a getcpu, a system call
	// too where the processor does not tell it, getcpu_linux.go; a look
	// is a note and two words per peer).
	balanceLook = 250 * time.Microsecond
	// balanceClockEvery is how many polls pass between two clock reads.
	balanceClockEvery = 8
	// balanceFresh is how recent a peer's published processor must be to
	// count: a rank that has neither spun nor ended a copy for that long
	// sleeps or computes, and may have moved meanwhile.
	balanceFresh = 2 * time.Millisecond
	// balanceQuiet is the least time between two moves by one rank.
	balanceQuiet = 2 * time.Millisecond
)

// newBalancer returns the balancer of e, whose local ranks are processes
// and outnumber the processors they can run on, or nil where this thread
// may run on one processor only (bound: its peers likely are too).
func newBalancer(e *Endpoint) *balancer {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil || set.Count() < 2 {
		return nil
	}
	b := &balancer{e: e, cpus: cpuList(&set), seen: [2]int{-1, -1}}
	b.noteNowFn = b.noteNow
	return b
}

// cpuList is the processors in set, in order.
func cpuList(set *unix.CPUSet) []int {
	var cpus []int
	for cpu := 0; cpu < maxCPUs; cpu++ {
		if set.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	return cpus
}

// cpuWord is the segment word where the owner publishes its processor,
// plus one, in the low 16 bits and the unix time in microseconds (modulo
// 2^48) it ran there above them; 0 before its first spin. A peer that
// moves the owner writes it too.
func (s *segment) cpuWord() *atomic.Uint64 { return s.word64(offCPU) }

// tidWord is the segment word where the owner publishes the thread it
// spins on.
func (s *segment) tidWord() *atomic.Uint64 { return s.word64(offTID) }

// cpuSample is one rank's published processor; valid when it is known
// and recent.
type cpuSample struct {
	rank, cpu int
	valid     bool
}

const stampMask = 1<<48 - 1

func packCPU(cpu int, now time.Time) uint64 {
	return uint64(now.UnixMicro())<<16 | uint64(cpu+1)&0xffff
}

func unpackCPU(w uint64, now time.Time) (cpu int, fresh bool) {
	if w == 0 {
		return -1, false
	}
	age := time.Duration((uint64(now.UnixMicro())-w>>16)&stampMask) * time.Microsecond
	return int(w&0xffff) - 1, age <= balanceFresh
}

// poll is called by each poll of a spinning wait, under e.pollMu; it
// reads the clock every balanceClockEvery polls, and looks every
// balanceLook.
func (b *balancer) poll() {
	if b.polls++; b.polls < balanceClockEvery {
		return
	}
	b.polls = 0
	now := time.Now()
	if now.UnixNano() < b.next {
		return
	}
	b.next = now.Add(balanceLook).UnixNano()
	b.look(now)
}

// note publishes the processor and thread this rank runs on, unless it
// did less than balanceLook ago. A copy calls it after each of its
// system calls (chunkHook), so that a rank that copies long is seen
// where it is.
func (b *balancer) note(now time.Time) {
	t := now.UnixNano()
	if last := b.noted.Load(); t-last >= int64(balanceLook) && b.noted.CompareAndSwap(last, t) {
		b.publish(now)
	}
}

// noteNow is note at the present time.
func (b *balancer) noteNow() { b.note(time.Now()) }

// chunkHook is what a copy calls after each of its system calls
// (readRemote's each): noteNow, so that a rank copying a block of many
// megabytes (16 MiB, 2-3 ms at copy speed here, in 1 MiB calls) stays
// fresh to its peers' looks (balanceFresh). Without it such a rank
// published only when its block ended and counted as asleep meanwhile:
// at 64 MiB AllToAll (16 MiB blocks) a look that saw two fresh ranks
// on one processor and two stale ones (copying on the other) moved one
// of the two over to the copiers, making the 3+1 it is meant to mend
// (bench/results/shm_large.md, session 18). Nil for a nil balancer.
func (b *balancer) chunkHook() func() {
	if b == nil {
		return nil
	}
	return b.noteNowFn
}

// publish publishes the processor and thread this rank runs on.
func (b *balancer) publish(now time.Time) (cpu int, ok bool) {
	if cpu, ok = getcpu(); ok {
		b.e.seg.tidWord().Store(uint64(unix.Gettid()))
		b.e.seg.cpuWord().Store(packCPU(cpu, now))
		b.noted.Store(now.UnixNano())
	}
	return cpu, ok
}

// look publishes this rank's processor and thread, and makes the move
// balanceMove says if the look before it (balanceLook earlier) said the
// same: a rank the scheduler placed for a moment is left to it.
func (b *balancer) look(now time.Time) {
	cpu, ok := b.publish(now)
	if !ok || now.UnixNano() < b.quiet {
		return
	}
	e := b.e
	samples := append(b.samples[:0], cpuSample{rank: e.rank, cpu: cpu, valid: true})
	for r, p := range e.peers {
		if r == e.rank || p == nil || p.gone.Load() {
			continue
		}
		c, fresh := unpackCPU(p.seg.cpuWord().Load(), now)
		samples = append(samples, cpuSample{rank: r, cpu: c, valid: fresh && c >= 0})
	}
	b.samples = samples
	rank, target, move := balanceMove(samples, b.cpus)
	seen := b.seen
	b.seen = [2]int{-1, -1}
	if !move {
		return
	}
	if seen != [2]int{rank, target} {
		b.seen = [2]int{rank, target}
		return
	}
	b.quiet = now.Add(balanceQuiet).UnixNano()
	seg, pid := e.seg, e.home.PID
	if rank != e.rank {
		seg, pid = e.peers[rank].seg, e.peers[rank].pid
	}
	if moveThread(pid, int(seg.tidWord().Load()), target) {
		seg.cpuWord().Store(packCPU(target, now))
		b.moves.Add(1)
	}
}

// moveThread migrates thread tid of process pid (this one or another of
// its user) to processor cpu, leaving the thread's affinity mask as it
// was. It fails where the thread is not pid's (gone, or a word written
// wrong), its mask does not hold cpu, or this process may not change it.
// It also fails where the mask holds one processor only: that may be
// another mover's (ranks that see the same crowd move the same thread,
// balanceMove being the same on each), bound for a moment, which this
// one would otherwise "restore" and leave the thread bound for good; a
// thread truly bound to one processor has nowhere to move anyway.
func moveThread(pid, tid, cpu int) bool {
	if pid <= 0 || tid <= 0 || unix.Tgkill(pid, tid, 0) != nil {
		return false
	}
	var mask, one unix.CPUSet
	if unix.SchedGetaffinity(tid, &mask) != nil || mask.Count() < 2 || !mask.IsSet(cpu) {
		return false
	}
	one.Set(cpu)
	if unix.SchedSetaffinity(tid, &one) != nil {
		return false
	}
	_ = unix.SchedSetaffinity(tid, &mask) // migrated: unbound again
	return true
}

// balanceMove decides which rank of samples moves, and where: where the
// processor with the most valid samples (the first on a tie) holds at
// least two more than the processor of allowed with the fewest (the
// first on a tie), even were every rank whose sample is not valid on the
// latter, the highest rank of the first moves to the second. A rank
// that is not valid may sleep, but it may as well run where this rank
// cannot see it (computing, copying its own block, or waiting for a
// core): at 64 MiB AllToAll, moves that counted only the valid ranks
// put a third rank on the processor where the stale ones copied
// (bench/results/shm_large.md, session 18). A pure function of its
// arguments, so every rank that looks at the same samples picks the
// same move.
func balanceMove(samples []cpuSample, allowed []int) (rank, target int, move bool) {
	var counts [maxCPUs]uint16
	unseen := uint16(0)
	for _, s := range samples {
		if s.valid && s.cpu < maxCPUs {
			counts[s.cpu]++
		} else if !s.valid {
			unseen++
		}
	}
	crowded, most := -1, uint16(0)
	for _, s := range samples {
		if !s.valid || s.cpu >= maxCPUs {
			continue
		}
		if n := counts[s.cpu]; n > most || n == most && s.cpu < crowded {
			crowded, most = s.cpu, n
		}
	}
	target, least := -1, uint16(0)
	for _, cpu := range allowed {
		if cpu >= maxCPUs {
			continue
		}
		if n := counts[cpu]; target < 0 || n < least {
			target, least = cpu, n
		}
	}
	if crowded < 0 || target < 0 || most < least+2+unseen {
		return 0, 0, false
	}
	rank = -1
	for _, s := range samples {
		if s.valid && s.cpu == crowded && s.rank > rank {
			rank = s.rank
		}
	}
	return rank, target, true
}

// maxCPUs bounds the processor numbers a balancer counts: those of a
// unix.CPUSet.
const maxCPUs = len(unix.CPUSet{}) * 64
