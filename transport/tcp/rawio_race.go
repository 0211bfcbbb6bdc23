//go:build race

package tcp

import "sync/atomic"

// rawIOSync stands for the data that moves through the kernel between a
// write and a later read (in one process: a send and its receive). The
// syscall package tells the race detector about it for ordinary reads and
// writes; raw system calls do not, so rawIO does, or the detector would
// report a buffer that a send read and its receive's reuse wrote.
var rawIOSync atomic.Uint64

// beforeRawWrite marks a write about to be made (a release: the reader
// may take the bytes before the write call returns).
func beforeRawWrite() { rawIOSync.Add(1) }

// afterRawRead marks a completed read (an acquire).
func afterRawRead() { rawIOSync.Load() }
