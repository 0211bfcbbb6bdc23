//go:build !linux

package collective

import (
	"sync/atomic"
	"time"
)

// futexWait sleeps d: without a futex, a board nap is a plain nap.
func futexWait(_ *atomic.Uint64, _ uint32, d time.Duration) { time.Sleep(d) }

// futexWake does nothing (futexWait wakes by itself).
func futexWake(*atomic.Uint64) {}
