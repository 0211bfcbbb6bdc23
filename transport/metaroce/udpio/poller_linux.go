package udpio

import (
	"fmt"
	"sync"
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

// Close releases the poller. It does not close the sockets.
func (p *Poller) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	return unix.Close(p.epfd)
}
