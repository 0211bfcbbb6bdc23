//go:build !amd64 || race

package collective

import "sync/atomic"

// publish stores v into the board word w with release order (see
// boardstore_amd64.go): here Go's atomic Store, which orders more.
func publish(w *atomic.Uint64, v uint64) { w.Store(v) }

// storeLoadFence does nothing: publish is Go's atomic Store here, and no
// later atomic load passes it.
func storeLoadFence() {}
