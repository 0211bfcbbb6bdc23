//go:build linux

package shm

import (
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func TestBalanceMove(t *testing.T) {
	s := func(rank, cpu int) cpuSample { return cpuSample{rank: rank, cpu: cpu, valid: true} }
	stale := func(rank, cpu int) cpuSample { return cpuSample{rank: rank, cpu: cpu} }
	two := []int{0, 1}
	cases := []struct {
		name         string
		samples      []cpuSample
		allowed      []int
		rank, target int
		move         bool
	}{
		{"3+1: the highest of the three moves", []cpuSample{s(0, 0), s(1, 1), s(2, 0), s(3, 0)}, two, 3, 1, true},
		{"3+1 seen by any rank", []cpuSample{s(1, 1), s(0, 0), s(3, 0), s(2, 0)}, two, 3, 1, true},
		{"1+3", []cpuSample{s(0, 1), s(1, 1), s(2, 0), s(3, 1)}, two, 3, 0, true},
		{"2+2 stays", []cpuSample{s(0, 0), s(1, 1), s(2, 0), s(3, 1)}, two, 0, 0, false},
		{"2+1 stays", []cpuSample{s(0, 0), s(1, 1), s(2, 0)}, two, 0, 0, false},
		{"4+0", []cpuSample{s(0, 0), s(1, 0), s(2, 0), s(3, 0)}, two, 3, 1, true},
		{"3+1 with a stale rank is 2+1", []cpuSample{stale(0, 0), s(1, 1), s(2, 0), s(3, 0)}, two, 0, 0, false},
		{"a stale rank may be on the emptiest processor", []cpuSample{s(0, 0), s(1, 1), s(2, 0), s(3, 0), stale(4, 0)}, two, 0, 0, false},
		{"two fresh on one, two stale (copying elsewhere)", []cpuSample{s(0, 1), stale(1, 0), s(2, 1), stale(3, 0)}, two, 0, 0, false},
		{"crowded even with the stale rank on the emptiest: a stale rank does not move", []cpuSample{s(0, 0), s(1, 0), s(2, 0), s(3, 0), stale(4, 0)}, two, 3, 1, true},
		{"ranks never seen count as stale", []cpuSample{s(0, 0), s(1, 0), s(2, 0), {rank: 3, cpu: -1}, {rank: 4, cpu: -1}}, two, 0, 0, false},
		{"to the emptiest allowed processor", []cpuSample{s(0, 1), s(1, 1), s(2, 0), s(3, 2), s(4, 2), s(5, 1)}, []int{0, 1, 2, 3}, 5, 3, true},
		{"not to a processor outside the mask", []cpuSample{s(0, 0), s(1, 0), s(2, 0), s(3, 1)}, []int{0}, 0, 0, false},
		{"processors past a CPUSet's are not counted", []cpuSample{s(0, 0), s(1, 1), s(2, maxCPUs), s(3, maxCPUs), s(4, maxCPUs)}, two, 0, 0, false},
		{"nothing known", []cpuSample{stale(0, 0), stale(1, 0), stale(2, 0)}, two, 0, 0, false},
	}
	for _, c := range cases {
		if a := testing.AllocsPerRun(10, func() { balanceMove(c.samples, c.allowed) }); a != 0 {
			t.Errorf("%s: balanceMove allocates %v times", c.name, a)
		}
		rank, target, move := balanceMove(c.samples, c.allowed)
		if move != c.move || move && (rank != c.rank || target != c.target) {
			t.Errorf("%s: balanceMove = rank %d to %d, %v; want rank %d to %d, %v", c.name, rank, target, move, c.rank, c.target, c.move)
		}
	}
}

func TestPackCPU(t *testing.T) {
	now := time.Now()
	for _, cpu := range []int{0, 1, 63, 1023} {
		c, fresh := unpackCPU(packCPU(cpu, now), now.Add(balanceFresh/2))
		if c != cpu || !fresh {
			t.Errorf("cpu %d: unpacked %d, fresh %v", cpu, c, fresh)
		}
		if _, fresh := unpackCPU(packCPU(cpu, now), now.Add(2*balanceFresh)); fresh {
			t.Errorf("cpu %d: fresh after %v", cpu, 2*balanceFresh)
		}
	}
	if c, fresh := unpackCPU(0, now); c != -1 || fresh {
		t.Errorf("the empty word unpacked to %d, %v", c, fresh)
	}
}

// TestMoveThread moves a spinning thread of this process (as a waiting
// rank's is) to each processor it may run on: it runs there next (a
// sleeping thread would be placed anew when it wakes), and its affinity
// mask is what it was. The scheduler may move it again at any time, so a
// move that it undid before the thread looked is tried again, a few times.
func TestMoveThread(t *testing.T) {
	var mask unix.CPUSet
	if err := unix.SchedGetaffinity(0, &mask); err != nil || mask.Count() < 2 {
		t.Skip("needs two processors")
	}
	var ask, stop atomic.Bool
	var cpu atomic.Int64
	var seen unix.CPUSet
	tid := make(chan int)
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid <- unix.Gettid()
		for !stop.Load() {
			if ask.Load() {
				c, _ := getcpu()
				_ = unix.SchedGetaffinity(0, &seen)
				cpu.Store(int64(c))
				ask.Store(false)
			}
		}
	}()
	id := <-tid
	defer func() { stop.Store(true); <-done }()
	for _, target := range cpuList(&mask) {
		for try := 0; ; try++ {
			if !moveThread(os.Getpid(), id, target) {
				t.Fatalf("moveThread to %d failed", target)
			}
			ask.Store(true)
			for ask.Load() {
				runtime.Gosched()
			}
			if seen != mask {
				t.Fatalf("moved to %d: mask %v, want %v", target, cpuList(&seen), cpuList(&mask))
			}
			if int(cpu.Load()) == target {
				break
			}
			if try == 4 {
				t.Fatalf("moved to %d five times: ran on %d", target, cpu.Load())
			}
		}
	}
	if moveThread(os.Getpid(), 1<<30, 0) || moveThread(1, id, 0) {
		t.Error("moveThread moved a thread that is not the process's")
	}
}

// TestBalancerNotesDuringCopy: a balancer's chunk hook, which readRemote
// runs after each system call of a copy, publishes the processor this
// rank runs on, so that a rank copying a block of many megabytes stays
// fresh to its peers' looks instead of counting as asleep until the
// block ends; a nil balancer (not oversubscribed) has no hook.
func TestBalancerNotesDuringCopy(t *testing.T) {
	if (*balancer)(nil).chunkHook() != nil {
		t.Fatal("a nil balancer has a chunk hook")
	}
	words := make([]uint64, 64)
	seg := &segment{mem: unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), 8*len(words))}
	b := &balancer{e: &Endpoint{seg: seg}, seen: [2]int{-1, -1}}
	b.noteNowFn = b.noteNow
	hook := b.chunkHook()
	src := make([]byte, 3*maxRemoteRead)
	dst := make([]byte, len(src))
	var proof [8]byte
	calls, published := 0, 0
	each := func() {
		calls++
		seg.cpuWord().Store(0)
		b.noted.Store(0) // as if the last note was long ago
		start := time.Now()
		hook()
		// Published by this call: stamped at start or after (not fresh by
		// time.Now(): a thread preempted for over balanceFresh between the
		// hook and the check, as in a loaded CI run of session 35, would
		// read as stale).
		w := seg.cpuWord().Load()
		cpu, _ := unpackCPU(w, start)
		since := (w>>16 - uint64(start.UnixMicro())) & stampMask
		if w != 0 && cpu >= 0 && since < uint64(time.Minute/time.Microsecond) &&
			seg.tidWord().Load() == uint64(unix.Gettid()) {
			published++
		}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := readRemote(os.Getpid(), dst, bufAddr(src), 0, 0, &proof, each); err != nil {
		t.Fatal(err)
	}
	if calls != 3 || published != 3 {
		t.Fatalf("a 3-call copy ran the hook %d times and published %d times, want 3 and 3", calls, published)
	}
}
