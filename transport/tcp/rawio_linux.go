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
//
// A rawIO serves one reader and one writer at a time (a conn's read and
// write loops, through their bufio buffers): each direction keeps its
// call's state in the rawIO, and the function RawConn calls with the
// descriptor is made once, so that a system call allocates nothing (a
// closure made per call escapes into RawConn: three allocations each).
type rawIO struct {
	rc syscall.RawConn

	rb    []byte // the Read under way: its buffer, result and errno
	rn    int
	rerr  syscall.Errno
	readF func(fd uintptr) bool

	wb     []byte // the Write under way: its buffer, bytes written, errno
	wn     int
	werr   syscall.Errno
	writeF func(fd uintptr) bool
}

// newRawIO returns nc's rawIO, or false if nc has no descriptor.
func newRawIO(nc net.Conn) (*rawIO, bool) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, false
	}
	r := &rawIO{rc: rc}
	r.readF, r.writeF = r.readFD, r.writeFD
	return r, true
}

// Read implements io.Reader.
func (r *rawIO) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	r.rb, r.rn, r.rerr = b, 0, 0
	err := r.rc.Read(r.readF)
	n, errno := r.rn, r.rerr
	r.rb = nil
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

// readFD is Read's call on the descriptor; false asks the poller to wait.
func (r *rawIO) readFD(fd uintptr) bool {
	r.rn, r.rerr = rawCall(syscall.SYS_READ, fd, r.rb)
	return r.rerr != syscall.EAGAIN
}

// Write implements io.Writer.
func (r *rawIO) Write(b []byte) (int, error) {
	r.wb, r.wn, r.werr = b, 0, 0
	beforeRawWrite()
	err := r.rc.Write(r.writeF)
	n, errno := r.wn, r.werr
	r.wb = nil
	if err == nil && errno != 0 {
		err = os.NewSyscallError("write", errno)
	}
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	return n, err
}

// writeFD is Write's call on the descriptor; false asks the poller to
// wait until the socket has room.
func (r *rawIO) writeFD(fd uintptr) bool {
	for r.wn < len(r.wb) {
		m, e := rawCall(syscall.SYS_WRITE, fd, r.wb[r.wn:])
		if e == syscall.EAGAIN {
			return false
		}
		if e != 0 {
			r.werr = e
			return true
		}
		r.wn += m
	}
	return true
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
