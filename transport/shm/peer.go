//go:build linux

package shm

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gocoll/gocoll/transport"
)

// peer is this rank's handle on another rank's segment: the ring there that
// this rank produces into, the peer's doorbell, and its process.
type peer struct {
	ep    *Endpoint
	rank  int
	seg   *segment // the peer's segment (this rank's own for itself)
	pid   int
	nonce uint64 // the peer's address's nonce: its challenge in the hellos (auth.go)
	// nonceAddr is where the nonce lies in the peer's own memory (its
	// mapping of its segment), which each copy from the peer reads in the
	// same system call as the data (readRemote); 0 if unknown.
	nonceAddr uint64
	pidfd     int               // -1 for this rank itself
	bellfd    int               // the peer's eventfd, taken into this process
	gone      atomic.Bool       // the peer closed, died or broke its ring: not read
	count     transport.Counter // messages completed with the peer (see TransportStats)

	mu           sync.Mutex
	ring         ring     // the peer's inbound ring from this rank
	backlog      [][]byte // encoded messages (their slots) waiting for ring space, oldest first
	backlogSlots int      // slots in backlog
	released     bool     // the mapping and descriptors are gone
}

// put queues s for the peer: straight into its ring, or behind the backlog
// if the ring is full. Then the peer is woken if it sleeps. After release
// it fails with ErrClosed.
func (p *peer) put(s *slot) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.released {
		return transport.ErrClosed
	}
	if p.gone.Load() {
		return &transport.PeerError{Rank: p.rank, Err: errors.New("shm: the rank is down")}
	}
	if len(p.backlog) == 0 && p.ring.put(s) {
		p.wake()
		return nil
	}
	msg := encodeSlots(s)
	if p.backlogSlots+len(msg)/SlotBytes > p.ep.cfg.BacklogMax {
		return fmt.Errorf("shm: rank %d reads nothing: %d slots wait for its ring (Config.BacklogMax)", p.rank, p.backlogSlots)
	}
	p.backlog = append(p.backlog, msg)
	p.backlogSlots += len(msg) / SlotBytes
	if len(p.backlog) == 1 {
		p.ep.backlogged.Add(1)
		p.ep.wakeSelf() // to look at the ring again in backlogWait, not idleWait
	}
	p.ep.stats.backlogged.Add(1)
	p.wake()
	return nil
}

// dropBacklog forgets what waits for a peer that is down.
func (p *peer) dropBacklog() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.backlog) > 0 {
		p.backlog, p.backlogSlots = nil, 0
		p.ep.backlogged.Add(-1)
	}
}

// flush moves backlogged slots into the ring while there is room.
func (p *peer) flush() (moved bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for !p.released && len(p.backlog) > 0 {
		msg := p.backlog[0]
		n := uint64(len(msg) / SlotBytes)
		t := p.ring.tail.Load()
		if t-p.ring.head.Load()+n > p.ring.mask+1 {
			break
		}
		for i := range n {
			copy(p.ring.at(t+i), msg[i*SlotBytes:])
		}
		released()
		p.ring.tail.Store(t + n)
		p.backlogSlots -= int(n)
		p.backlog[0] = nil
		p.backlog = p.backlog[1:]
		moved = true
		if len(p.backlog) == 0 {
			p.backlog = nil
			p.ep.backlogged.Add(-1)
		}
	}
	if moved {
		p.wake()
	}
	return moved
}

// copied tells the peer that this rank copied (or dropped) its claimed
// rendezvous send id, in place of a message: the send's word moves from
// claimed to copied, the peer's segment counts one more copied send, and
// the peer is woken if it sleeps; its poll then completes the send
// (Endpoint.reapCopied). After release it fails with ErrClosed.
func (p *peer) copied(id uint64) error {
	idx, gen := sendWordOf(id)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.released {
		return transport.ErrClosed
	}
	released()
	p.seg.sendWord(idx).CompareAndSwap(sendWordValue(gen, sendClaimed), sendWordValue(gen, sendCopied))
	p.seg.copiedCount().Add(1)
	p.wake()
	return nil
}

// wake rings the peer's doorbell if it sleeps and no Wait of the peer polls
// the rings (see Endpoint.spin). Clearing the flag first means one doorbell
// per sleep, however many slots wake it. The caller holds p.mu.
func (p *peer) wake() {
	if p.seg.spinners().Load() == 0 && p.seg.sleeping().CompareAndSwap(1, 0) {
		ringDoorbell(p.bellfd)
		p.ep.stats.wakes.Add(1)
	}
}

// release unmaps the peer's segment and closes its descriptors.
func (p *peer) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.released {
		return
	}
	p.released = true
	if p.pidfd >= 0 {
		p.seg.unmap()
		_ = unix.Close(p.pidfd)
		_ = unix.Close(p.bellfd)
	}
}

// bufAddr is the address of buf's first byte, which a peer copies from.
// The request holding buf keeps it alive, and Go does not move heap memory.
func bufAddr(buf []byte) uint64 {
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(buf))))
}
