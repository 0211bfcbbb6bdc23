//go:build linux

package shm

import (
	"unsafe"

	"github.com/klauspost/cpuid/v2"
	"golang.org/x/sys/unix"
)

// getcpu is the processor the calling thread runs on: read from the
// processor itself where it can tell (tscAuxCPU), else through the
// getcpu system call. A balancer asks at every note (balancer.publish),
// a few times a call of a 256 KiB AllToAll at 4 ranks, where each system
// call passes the host's BPF programs (bench/results/shm28).
func getcpu() (int, bool) {
	if tscAuxOK {
		return tscAuxCPU(), true
	}
	return getcpuSys()
}

// getcpuSys is getcpu through the system call.
func getcpuSys() (int, bool) {
	var cpu uint32
	_, _, errno := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0)
	return int(cpu), errno == 0
}

// tscAuxCPU is the processor number Linux keeps in the low 12 bits of
// IA32_TSC_AUX (above them the NUMA node), which RDTSCP reads without a
// system call, as the vDSO's getcpu does; 0 where the processor has no
// RDTSCP (then tscAuxOK is false).
func tscAuxCPU() int { return int(cpuid.CPU.Ia32TscAux() & 0xfff) }

// tscAuxOK reports whether tscAuxCPU tells the processor here: the
// processor has RDTSCP and, at start-up, it agreed with the system call
// (checkTSCAux).
var tscAuxOK = cpuid.CPU.Has(cpuid.RDTSCP) && checkTSCAux(tscAuxCPU, getcpuSys)

// checkTSCAux reports whether aux reads the processor as sys does: it
// needs one agreement of a few tries, each the same processor on both
// sides of the system call (the thread may move between the reads), and
// no try where the two differed while aux's stayed put.
func checkTSCAux(aux func() int, sys func() (int, bool)) bool {
	agreed := false
	for range 4 {
		before := aux()
		cpu, ok := sys()
		if !ok {
			return false
		}
		if after := aux(); before == after {
			if cpu != before {
				return false
			}
			agreed = true
		}
	}
	return agreed
}
