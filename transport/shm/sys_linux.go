//go:build linux

package shm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Supported reports whether this platform has the shared-memory transport
// at all. It is true on Linux, where Listen may still fail (a kernel older
// than 5.6, a ptrace policy that forbids it); elsewhere it is false and
// Listen and NewLocalWorld fail with an error that matches
// errors.ErrUnsupported.
const Supported = true

// bootID is this kernel's boot id: equal for every process on the host.
func bootID() (string, error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", fmt.Errorf("shm: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// pidNamespace is the inode number of this process's PID namespace: ranks
// in different PID namespaces cannot name each other's processes, so
// shared memory cannot join them even under one kernel (containers).
func pidNamespace() (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/ns/pid", &st); err != nil {
		return 0, fmt.Errorf("shm: PID namespace: %w", err)
	}
	return st.Ino, nil
}

// allowPeers lets processes of the same user read this one's memory when
// Yama restricts ptrace to descendants (ptrace_scope 1), as cross-memory
// attach needs. Where Yama is absent or stricter nothing is changed.
func allowPeers() {
	b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope")
	if err != nil || strings.TrimSpace(string(b)) != "1" {
		return
	}
	_ = unix.Prctl(unix.PR_SET_PTRACER, unix.PR_SET_PTRACER_ANY, 0, 0, 0)
}

// takeFD duplicates descriptor fd of process pidfd into this process.
func takeFD(pidfd, fd int, what string) (int, error) {
	nfd, err := unix.PidfdGetfd(pidfd, fd, 0)
	if err != nil {
		if errors.Is(err, unix.EPERM) {
			return -1, fmt.Errorf("shm: taking the peer's %s: %w (ptrace permission is needed: same user, or CAP_SYS_PTRACE)", what, err)
		}
		return -1, fmt.Errorf("shm: taking the peer's %s: %w", what, err)
	}
	unix.CloseOnExec(nfd)
	return nfd, nil
}

// readRemote copies len(dst) bytes at addr in process pid into dst. When
// check is not 0, each system call also reads the 8 bytes at check in that
// process into proof, and they must equal want (else errExited): the
// kernel looks pid up once per call, so equal bytes show that the data came
// from the process that holds them, though a pid may name another process
// once its own has ended, with no liveness check of its own after the copy.
//
// Each call is a raw system call of at most maxRemoteRead bytes: a copy of
// megabytes takes hundreds of microseconds, and through the runtime's
// system call path the monitor thread takes the copying thread's P away
// after 20 us and wakes another thread to run it, so that every large
// receive cost thread wake-ups and a return without its P; with 4 ranks on
// 2 cores that doubled the time of a 16 MiB AllToAll
// (bench/results/shm_large.md, session 15). The P stays held instead, for
// at most one call (about 0.2 ms at copy speed).
//
// each, if not nil, is called after every system call that copied: a
// balancer notes there where this rank runs (balancer.note), so that a
// rank copying a block of many megabytes is not taken for one that sleeps.
func readRemote(pid int, dst []byte, addr, check, want uint64, proof *[8]byte, each func()) error {
	for len(dst) > 0 {
		n := min(len(dst), maxRemoteRead)
		local := [2]unix.Iovec{{Base: &dst[0]}, {Base: &proof[0]}}
		local[0].SetLen(n)
		local[1].SetLen(len(proof))
		remote := [2]unix.RemoteIovec{{Base: uintptr(addr), Len: n}, {Base: uintptr(check), Len: len(proof)}}
		iovs := 1
		if check != 0 {
			iovs = 2
		}
		r, _, errno := unix.RawSyscall6(unix.SYS_PROCESS_VM_READV, uintptr(pid),
			uintptr(unsafe.Pointer(&local[0])), uintptr(iovs), uintptr(unsafe.Pointer(&remote[0])), uintptr(iovs), 0)
		got := int(r)
		if errno != 0 {
			return fmt.Errorf("shm: reading %d bytes of process %d: %w", n, pid, errno)
		}
		if got <= 0 {
			return fmt.Errorf("shm: reading %d bytes of process %d: no progress", n, pid)
		}
		if check != 0 {
			if got != n+len(proof) || binary.LittleEndian.Uint64(proof[:]) != want {
				return errExited // another process, or the peer's segment is gone
			}
			got = n
		}
		dst, addr = dst[got:], addr+uint64(got)
		if each != nil {
			each()
		}
	}
	return nil
}

// maxRemoteRead is the most bytes one system call of readRemote copies:
// 1 MiB copied the same 16 and 64 MiB AllToAll as 4 MiB did, and holds a
// P a quarter as long.
const maxRemoteRead = 1 << 20

// exited reports whether the process behind pidfd has ended.
func exited(pidfd int) bool {
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&(unix.POLLIN|unix.POLLHUP) != 0
}

// doorbell is an eventfd that peers write to wake this endpoint; its reader
// waits through the Go netpoller, so no OS thread blocks in it.
type doorbell struct {
	fd   int             // the eventfd, as peers take it
	file *os.File        // the same descriptor, pollable
	raw  syscall.RawConn // file's, for reads without the runtime's syscall path
}

func newDoorbell() (*doorbell, error) {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("shm: eventfd: %w", err)
	}
	d := &doorbell{fd: fd, file: os.NewFile(uintptr(fd), "gocoll-shm-doorbell")}
	d.raw, err = d.file.SyscallConn()
	if err != nil {
		_ = d.file.Close()
		return nil, fmt.Errorf("shm: eventfd: %w", err)
	}
	return d, nil
}

// ringDoorbell wakes the owner of the eventfd fd (taken from a peer or its
// own). The write never blocks (the counter is far from overflow), so it is
// a raw system call: the runtime's bookkeeping for a blocking one would wake
// its monitor thread on every message.
func ringDoorbell(fd int) {
	one := [8]byte{1}
	_, _, _ = unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&one[0])), 8)
}

// wait sleeps until the doorbell rings or d passes, through the netpoller.
// Its reads are raw system calls for the reason ringDoorbell's write is.
func (d *doorbell) wait(timeout time.Duration) {
	_ = d.file.SetReadDeadline(time.Now().Add(timeout))
	var buf [8]byte
	_ = d.raw.Read(func(fd uintptr) bool {
		_, _, errno := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&buf[0])), 8)
		return errno != unix.EAGAIN
	})
}

func (d *doorbell) close() error { return d.file.Close() }
