package main

import (
	"fmt"
	"syscall"
	"unsafe"
)

func tcpu() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

func main() {
	buf := make([]byte, 1<<20)
	const n = 200000
	meas := func(f func(int, *byte)) float64 {
		best := 1e18
		for range 15 {
			t := tcpu()
			f(n, &buf[0])
			best = min(best, float64(tcpu()-t))
		}
		return best / n
	}
	unit := meas(fns[0].f) // one VPADDD chain step per iteration + loop: ~1 cycle
	fmt.Printf("unit %.4f ns\n", unit)
	for _, e := range fns {
		fmt.Printf("%-16s %6.2f cycles/iter\n", e.name, meas(e.f)/unit)
	}
}
