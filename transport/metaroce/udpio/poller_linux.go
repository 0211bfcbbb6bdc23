package udpio

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Poller tells which of a set of sockets have something to read, without
// waiting: the readiness check of a goroutine that polls its sockets
// itself for a short while (see [Socket.TryReadBatch]) instead of sleeping
// until the runtime's poller wakes a reader. One Ready costs one system
// call however many sockets there are.
type Poller struct {
	mu     sync.Mutex // guards epfd and evs
	epfd   int        // -1 once closed
	evs    []unix.EpollEvent
	closed bool
	// outer, made by the first Wait, is an epoll set that holds epfd
	// alone, one-shot, and that the runtime's poller watches (an
	// os.File); outerRaw is its RawConn. See Wait.
	outer    *os.File
	outerRaw syscall.RawConn
	outerEv  [1]unix.EpollEvent // Wait's scratch (one waiter at a time)
	// rearmFn and waitFn are rearm and waitOuter bound once, and armEv
	// and armErr rearm's event and outcome (under mu), so that a Wait
	// allocates nothing (a closure per call, and the event it captured,
	// were one of the endpoint reader's few allocations).
	rearmFn func(fd uintptr)
	waitFn  func(fd uintptr) bool
	armEv   unix.EpollEvent
	armErr  error
}

// NewPoller watches socks; Ready names them by their index in socks.
func NewPoller(socks []*Socket) (*Poller, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("udpio: poller: %w", err)
	}
	p := &Poller{epfd: epfd, evs: make([]unix.EpollEvent, len(socks))}
	for i, s := range socks {
		var aerr error
		cerr := s.raw.Control(func(fd uintptr) {
			ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLERR, Fd: int32(i)}
			aerr = unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, int(fd), &ev)
		})
		if err := firstError(cerr, aerr); err != nil {
			_ = unix.Close(epfd)
			return nil, fmt.Errorf("udpio: poller: socket %d: %w", i, err)
		}
	}
	return p, nil
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Ready appends to dst the index of every socket that has a datagram or an
// error waiting, and returns the result. It never blocks. After Close it
// returns dst as it was.
func (p *Poller) Ready(dst []int) ([]int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.evs) == 0 {
		return dst, nil
	}
	for {
		// A raw call: epoll_wait with no timeout never blocks.
		n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(p.epfd),
			uintptr(unsafe.Pointer(&p.evs[0])), uintptr(len(p.evs)), 0, 0, 0)
		switch e {
		case unix.EINTR:
			continue
		case 0:
			for _, ev := range p.evs[:n] {
				dst = append(dst, int(ev.Fd))
			}
			return dst, nil
		default:
			return dst, fmt.Errorf("udpio: poller: %w", e)
		}
	}
}

// Add watches s too, under index i (which Ready then reports for s as for
// the socket already watched under it: a socket that replaces another,
// which stays watched until it is closed).
func (p *Poller) Add(i int, s *Socket) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return fmt.Errorf("udpio: poller: closed")
	}
	var aerr error
	cerr := s.raw.Control(func(fd uintptr) {
		ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLERR, Fd: int32(i)}
		aerr = unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, int(fd), &ev)
	})
	if err := firstError(cerr, aerr); err != nil {
		return fmt.Errorf("udpio: poller: add socket %d: %w", i, err)
	}
	p.evs = append(p.evs, unix.EpollEvent{})
	return nil
}

// Wait parks the calling goroutine in the runtime's poller until one of
// the sockets has something to read or an error (Ready would name it),
// timeout has passed (then it returns nil all the same), or the poller is
// closed (an error wrapping net.ErrClosed). One goroutine may Wait at a
// time. It is the wait of a goroutine that reads all the sockets
// (unpolled ones: Config.Unpolled) for a whole set: between two Waits a
// datagram wakes nobody, so the goroutine can sleep a while after a wake
// and read what several sockets received meanwhile in one go.
//
// The runtime watches an outer epoll set that holds the poller's own
// one-shot: the first readiness of any socket wakes the waiter, and
// disarms the outer set until the next Wait re-arms it (one epoll_ctl),
// so that the datagrams that arrive between Waits do not wake the
// process at all (a nested set otherwise passes every arrival up).
func (p *Poller) Wait(timeout time.Duration) error {
	if err := p.arm(); err != nil {
		return err
	}
	if err := p.outer.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return p.closedErr(err)
	}
	err := p.outerRaw.Read(p.waitFn)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return nil
	}
	return p.closedErr(err)
}

// waitOuter is Wait's read of the outer set (outerRaw.Read's function):
// it reports whether the set was ready.
func (p *Poller) waitOuter(fd uintptr) bool {
	for {
		n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, fd,
			uintptr(unsafe.Pointer(&p.outerEv[0])), 1, 0, 0, 0)
		if e == unix.EINTR {
			continue
		}
		return e != 0 || n > 0 // an error: Ready will tell
	}
}

// rearm re-arms the outer set fd (outerRaw.Control's function), setting
// armErr. The caller holds mu.
func (p *Poller) rearm(fd uintptr) {
	p.armEv = unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLONESHOT}
	p.armErr = unix.EpollCtl(int(fd), unix.EPOLL_CTL_MOD, p.epfd, &p.armEv)
}

// arm makes the outer epoll set of Wait (the first time) or re-arms it.
func (p *Poller) arm() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return fmt.Errorf("udpio: poller: %w", net.ErrClosed)
	}
	if p.outer != nil {
		p.armErr = nil
		cerr := p.outerRaw.Control(p.rearmFn)
		if err := firstError(cerr, p.armErr); err != nil {
			return fmt.Errorf("udpio: poller: re-arm: %w", err)
		}
		return nil
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLONESHOT}
	ofd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return fmt.Errorf("udpio: poller: %w", err)
	}
	if err := firstError(unix.SetNonblock(ofd, true), unix.EpollCtl(ofd, unix.EPOLL_CTL_ADD, p.epfd, &ev)); err != nil {
		_ = unix.Close(ofd)
		return fmt.Errorf("udpio: poller: %w", err)
	}
	f := os.NewFile(uintptr(ofd), "udpio-poller")
	raw, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("udpio: poller: %w", err)
	}
	p.outer, p.outerRaw = f, raw
	p.rearmFn, p.waitFn = p.rearm, p.waitOuter
	return nil
}

// closedErr returns err, as wrapping net.ErrClosed if the poller is closed.
func (p *Poller) closedErr(err error) error {
	if err == nil {
		return nil
	}
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed || errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("udpio: poller: %w", net.ErrClosed)
	}
	return fmt.Errorf("udpio: poller: %w", err)
}

// Close releases the poller and ends a Wait. It does not close the
// sockets.
func (p *Poller) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	if p.outer != nil {
		_ = p.outer.Close()
	}
	return unix.Close(p.epfd)
}
