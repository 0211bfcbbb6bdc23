//go:build !linux

package spinwait

// yieldCPU does nothing where sched_yield is not at hand: runtime.Gosched
// alone yields.
func yieldCPU() {}
