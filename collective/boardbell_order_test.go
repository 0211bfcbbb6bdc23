//go:build !race

// Not under the race detector: there publish is Go's atomic Store (no
// store can pass a later load), and the words here are Go heap memory,
// whose plain bounds-check read in word the detector reports beside the
// other thread's atomic writes (real boards are mapped memory, unseen).

package collective

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestBoardBellStoreLoadOrder runs the bell's handshake between two
// threads many times: the owner ends a lean call (leanEnd: its ended
// word by publish, then ringBell's load of want); the
// sleeper marks want (wantBell) and then looks at the word. Whatever the
// interleaving, one of them must see the other's write: the sleeper the
// word, or the owner the want (and ring). An iteration where neither did
// is a lost wake-up (the sleeper would sleep its whole nap). Before each
// race both threads hold the other's line (the owner has loaded want, as
// its every call does; the sleeper has looked at the word), the state in
// which a load can be served from the core's own cache while its store
// still waits in the store buffer (x86-TSO lets a load pass an earlier
// store to another address). The count is what the test asserts: no
// timing.
func TestBoardBellStoreLoadOrder(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 || runtime.NumCPU() < 2 {
		t.Skip("needs 2 processors")
	}
	n := 200000
	if testing.Short() {
		n = 20000
	}
	b := &boardState{peers: [][]byte{make([]byte, boardCtrlBytes)}}
	m := b.peers[0]
	ended, want, bell := word(m, boardOffEnded), word(m, boardOffWant), word(m, boardOffBell)
	var arrived atomic.Uint64
	barrier := func(k *uint64) { // both threads pass the k-th barrier together
		*k += 2
		arrived.Add(1)
		for j := 0; arrived.Load() < *k; j++ {
			if j > 1<<12 {
				runtime.Gosched()
				j = 0
			}
		}
	}
	rung, missed := make([]bool, n+1), make([]bool, n+1)
	var wg sync.WaitGroup
	wg.Go(func() { // the owner of the board
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var k uint64
		for i := 1; i <= n; i++ {
			barrier(&k) // the sleeper clears want
			barrier(&k)
			_ = want.Load()
			barrier(&k)
			v := bell.Load()
			b.leanEnd(0, uint64(i)) // publish(ended, i), then ringBell
			rung[i] = bell.Load() != v
		}
		barrier(&k)
	})
	wg.Go(func() { // a peer about to sleep on its bell
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var k uint64
		for i := 1; i <= n; i++ {
			barrier(&k)
			want.Store(0)
			barrier(&k)
			_ = ended.Load()
			barrier(&k)
			wantBell(want, uint64(i))
			missed[i] = ended.Load() < uint64(i)
		}
		barrier(&k)
	})
	wg.Wait()
	lost, rings, misses := 0, 0, 0
	for i := 1; i <= n; i++ {
		if rung[i] {
			rings++
		}
		if missed[i] {
			misses++
			if !rung[i] {
				lost++
			}
		}
	}
	t.Logf("%d races: the owner rang %d times, the sleeper missed the write %d times, both missed %d times", n, rings, misses, lost)
	if lost > 0 {
		t.Errorf("%d lost wake-ups in %d races: the owner's load of want passed its store of the word", lost, n)
	}
}
