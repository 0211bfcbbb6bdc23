package mrtransport

import (
	"context"
	"errors"
	"net"
	"sync"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/internal/spinwait"
	"github.com/gocoll/gocoll/transport/metaroce/udpio"
)

// spinBatch is the most datagrams a spinning waiter reads from one socket
// at a time.
const spinBatch = 4

// spinner lets a goroutine that waits for a request read the path sockets
// itself for a while (Config.SpinWait) instead of sleeping until a reader
// goroutine, woken by the runtime's poller, completes the request: on a
// host where ranks outnumber cores, the wake-up of a sleeping process
// costs more than the rest of a small message's trip. One waiter reads at
// a time; the others only yield. The readers stay: whichever of a reader
// and a waiter reads a datagram first handles it, the same way.
type spinner struct {
	mu      sync.Mutex // one waiter reads at a time; guards the fields below
	poller  *udpio.Poller
	readers []*udpio.TryReader // by path
	ready   []int
	rd      []udpio.Message
	ms      []Message
}

var _ transport.Spinner = (*request)(nil)

// newSpinner returns a spinner over socks, or nil where a waiter cannot
// read them itself: some socket is not a udpio socket (simulated or
// interposed sockets), or the system has no Poller.
func newSpinner(socks []PathSocket) *spinner {
	us := make([]*udpio.Socket, len(socks))
	for i, s := range socks {
		u, ok := s.(*udpioSocket)
		if !ok {
			return nil
		}
		us[i] = u.s
	}
	p, err := udpio.NewPoller(us)
	if err != nil {
		return nil
	}
	sp := &spinner{poller: p, rd: make([]udpio.Message, spinBatch), ms: make([]Message, spinBatch)}
	for _, u := range us {
		sp.readers = append(sp.readers, udpio.NewTryReader(u, spinBatch))
	}
	for i := range sp.ms {
		sp.ms[i].Buf = make([]byte, ReadBufferSize)
	}
	return sp
}

// Spin implements transport.Spinner: it reads the path sockets in the
// caller's goroutine until r completes, ctx ends or Config.SpinWait has
// passed.
func (r *request) Spin(ctx context.Context) bool {
	select {
	case <-r.done:
		return true
	default:
	}
	if r.ep == nil || r.ep.eng.spin == nil || r.ep.cfg.SpinWait <= 0 {
		return false
	}
	return spinwait.Until(ctx, r.done, r.ep.cfg.SpinWait, r.ep.eng.spinRead)
}

// spinRead reads whatever the path sockets hold, without waiting, and
// feeds it to the core as a reader would. It leaves the sockets to the
// readers while the core places payloads (a bulk transfer: readers read
// those straight into their receive buffers), and while another waiter
// reads.
func (e *engine) spinRead() {
	sp := e.spin
	if e.placing.Load() || !sp.mu.TryLock() {
		return
	}
	defer sp.mu.Unlock()
	ready, err := sp.poller.Ready(sp.ready[:0])
	sp.ready = ready
	if err != nil {
		return
	}
	for _, path := range ready {
		n, err := readMessages(sp.ms, sp.rd, sp.readers[path].ReadBatch)
		if err != nil || n == 0 {
			// An error, or a socket ready with nothing to read: a port
			// unreachable may wait in its error queue (its pending
			// error is reported once, to whichever call comes first).
			if !errors.Is(err, net.ErrClosed) {
				e.handleRefused(e.drainIfPending(path, err != nil, nil))
			}
			continue
		}
		e.st.spinBatches.Add(1)
		if !e.handleBatch(path, sp.ms[:n]) {
			return
		}
	}
}
