//go:build !race

package collective

import (
	"sync/atomic"
	"unsafe"
)

// storeRelease stores v at p with release order only (boardstore_amd64.s).
//
//go:noescape
func storeRelease(p *uint64, v uint64)

// storeLoadFence orders this rank's earlier stores before its later
// loads (boardstore_amd64.s): what publish does not give, for the one
// load after publishes that decides something, ringBell's of want.
func storeLoadFence()

// publish stores v into the board word w with release order: whatever
// this rank stored before is visible to a peer that loads v from w. On
// amd64 it is a plain store, where Go's atomic Store is an XCHG, a full
// barrier that waits for w's cache line, which the peers reading it have
// taken, on every call (bench/results/small_ops.md, Session 16). What it
// does not give is the order of w's store before this rank's later
// loads: it is only for words peers wait on to rise (a slot's sequence,
// an ack, an ended word), never for one side of a decision both sides
// take from what the other stored (boardlean.go says why the lean path's
// stores are of the first kind). Under the race detector, which does not
// see assembly, it is atomic Store.
func publish(w *atomic.Uint64, v uint64) {
	storeRelease((*uint64)(unsafe.Pointer(w)), v) // an atomic.Uint64's value is its only field
}
