package udpio

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// unpolledSlice is the longest poll(2) wait of a call on an unpolled
// socket (Config.Unpolled) that must wait: between slices it looks at
// Close and the deadlines, which nothing else would tell it.
const unpolledSlice = 10 * time.Millisecond

// fdConn is the syscall.RawConn of an unpolled socket: the socket's
// descriptor (non-blocking), which the runtime's poller does not watch.
// Every call holds mu's read side while it uses fd, and close takes the
// write side, so that no call uses a descriptor number closed (and maybe
// reused) under it; a call that waits does so in slices of unpolledSlice,
// so close waits at most that long.
type fdConn struct {
	s             *Socket
	mu            sync.RWMutex
	fd            int // -1 once closed
	writeDeadline atomic.Int64
}

// unpoll takes s out of the runtime's poller: it keeps a duplicate of the
// socket's descriptor and closes the net.UDPConn, whose close removes its
// descriptor from the poller (the socket lives on in the duplicate).
func (s *Socket) unpoll() error {
	fd, derr := -1, error(nil)
	if err := s.raw.Control(func(f uintptr) { fd, derr = unix.FcntlInt(f, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return err
	}
	if derr != nil {
		return fmt.Errorf("unpolled: dup: %w", derr)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		_ = unix.Close(fd)
		return fmt.Errorf("unpolled: %w", err)
	}
	_ = s.conn.Close()
	c := &fdConn{s: s, fd: fd}
	s.unpolled, s.raw = c, c
	return nil
}

// alive reports an error wrapping net.ErrClosed once c is closed.
func (c *fdConn) alive() error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.fd < 0 {
		return fmt.Errorf("udpio: %v: %w", c.s.local, net.ErrClosed)
	}
	return nil
}

// close closes the descriptor, after the calls using it have returned.
func (c *fdConn) close(local netip.AddrPort) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd < 0 {
		return fmt.Errorf("udpio: close %v: %w", local, net.ErrClosed)
	}
	err := unix.Close(c.fd)
	c.fd = -1
	return err
}

// Control implements syscall.RawConn.
func (c *fdConn) Control(f func(fd uintptr)) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.fd < 0 {
		return fmt.Errorf("udpio: %v: %w", c.s.local, net.ErrClosed)
	}
	f(uintptr(c.fd))
	return nil
}

// Read implements syscall.RawConn: f until it reports done, waiting in
// poll(2) for something to read between calls.
func (c *fdConn) Read(f func(fd uintptr) bool) error {
	return c.wait(f, unix.POLLIN, &c.s.readDeadline)
}

// Write implements syscall.RawConn, as Read for room to write.
func (c *fdConn) Write(f func(fd uintptr) bool) error {
	return c.wait(f, unix.POLLOUT, &c.writeDeadline)
}

// wait runs f until it reports done, polling for events between calls,
// until Close or the deadline (Unix ns, 0 none).
func (c *fdConn) wait(f func(fd uintptr) bool, events int16, deadline *atomic.Int64) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for {
		if c.fd < 0 || c.s.closing.Load() {
			return fmt.Errorf("udpio: %v: %w", c.s.local, net.ErrClosed)
		}
		if f(uintptr(c.fd)) {
			return nil
		}
		slice := unpolledSlice
		if d := deadline.Load(); d != 0 {
			left := time.Duration(d - time.Now().UnixNano())
			if left <= 0 {
				return fmt.Errorf("udpio: %v: %w", c.s.local, os.ErrDeadlineExceeded)
			}
			slice = min(slice, left)
		}
		fds := []unix.PollFd{{Fd: int32(c.fd), Events: events}}
		ms := int((slice + time.Millisecond - 1) / time.Millisecond)
		if _, err := unix.Poll(fds, ms); err != nil && err != unix.EINTR {
			return fmt.Errorf("udpio: %v: poll: %w", c.s.local, err)
		}
	}
}
