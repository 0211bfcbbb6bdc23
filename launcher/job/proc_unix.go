//go:build unix

package job

import (
	"fmt"
	"syscall"
)

// What every Unix shares of starting and signalling ranks; proc_linux.go
// and proc_other.go hold what differs among them, proc_nounix.go the
// refusal on other systems.

// sigDiagnose, arriving on Spec.Signals, asks for a diagnosis (WhySignal).
const sigDiagnose = syscall.SIGUSR1

// startSupported says whether ranks can start on this system: on every
// Unix they can.
func startSupported() error { return nil }

// signalGroup sends sig to the process group that pid leads.
func signalGroup(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }

// checkFiles makes sure the launcher may open the files np ranks need
// (FilesPerRank each), within its RLIMIT_NOFILE.
func checkFiles(np int) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return nil // no limit known: the start fails on its own, with its error
	}
	limit := uint64(lim.Cur) // int64 on some BSDs
	if uint64(np)*FilesPerRank+FilesReserved <= limit {
		return nil
	}
	most := uint64(0)
	if limit > FilesReserved {
		most = (limit - FilesReserved) / FilesPerRank
	}
	return fmt.Errorf("-np %d: this launcher may open %d files (RLIMIT_NOFILE), enough for %d ranks at %d files each; raise the limit (ulimit -n) or use fewer ranks",
		np, limit, most, FilesPerRank)
}
