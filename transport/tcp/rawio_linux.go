package tcp

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// rawBytesMax is the largest read or write rawIO makes with a raw system
// call; larger ones (rendezvous chunks straight to or from the caller's
// buffer) use ordinary system calls.
const rawBytesMax = 64 << 10

// rawIO reads and writes a socket's non-blocking descriptor, waiting for
// readiness through the runtime's network poller as net.Conn does. Reads
// and writes of at most rawBytesMax bytes use raw system calls (which never
// block on a non-blocking descriptor): unlike net.Conn's, they do not wake
// the runtime's monitor thread (sysmon) when it sleeps, which it does
// whenever the process has been idle, so on a host with more ranks than
// cores a small message no longer costs that thread a wake-up and a sleep
// (the 8-byte AllReduce in bench_test.go: 4 processes on 2 cores spent
// 12-16 % of their CPU in sysmon).
type rawIO struct {
	rc syscall.RawConn
}

// newRawIO returns nc's rawIO, or false if nc has no descriptor.
func newRawIO(nc net.Conn) (rawIO, bool) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return rawIO{}, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return rawIO{}, false
	}
	return rawIO{rc: rc}, true
}

// Read implements io.Reader.
func (r rawIO) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := r.rc.Read(func(fd uintptr) bool {
		n, errno = rawCall(syscall.SYS_READ, fd, b)
		return errno != syscall.EAGAIN
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, os.NewSyscallError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	afterRawRead()
	return n, nil
}

// Write implements io.Writer.
func (r rawIO) Write(b []byte) (int, error) {
	var n int
	var errno syscall.Errno
	beforeRawWrite()
	err := r.rc.Write(func(fd uintptr) bool {
		for n < len(b) {
			m, e := rawCall(syscall.SYS_WRITE, fd, b[n:])
			if e == syscall.EAGAIN {
				return false // wait until the socket has room
			}
			if e != 0 {
				errno = e
				return true
			}
			n += m
		}
		return true
	})
	if err == nil && errno != 0 {
		err = os.NewSyscallError("write", errno)
	}
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	return n, err
}

// rawCall makes the read or write system call trap on fd with b (not
// empty), raw if b is small, retrying when interrupted.
func rawCall(trap, fd uintptr, b []byte) (int, syscall.Errno) {
	if len(b) > rawBytesMax {
		for {
			r1, _, e := syscall.Syscall(trap, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
			if e != syscall.EINTR {
				return int(r1), e
			}
		}
	}
	for {
		r1, _, e := syscall.RawSyscall(trap, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		if e != syscall.EINTR {
			return int(r1), e
		}
	}
}
