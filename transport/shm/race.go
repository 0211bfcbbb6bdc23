//go:build race

package shm

import "sync/atomic"

// handoff stands for the bytes that move through shared memory and
// process_vm_readv between a send and its receive in one process. The race
// detector sees neither (the rings are mapped memory, the copy is the
// kernel's), so without these marks it would report a buffer that a send
// read and its receive's reuse wrote.
var handoff atomic.Uint64

// released marks data about to be handed over (a slot put, a send marked
// copied).
func released() { handoff.Add(1) }

// acquired marks data taken over (a slot read).
func acquired() { handoff.Load() }
