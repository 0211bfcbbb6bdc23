package collective

import (
	"context"

	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/transport"
)

// p2pSalt separates the tag space of point-to-point messages from the
// communicator's collectives.
const p2pSalt = 0x9e3779b97f4a7c15

// sendTo launches a point-to-point send of buf to peer. Sends from this rank
// to peer match peer's receives from this rank in order.
func (c *Comm) sendTo(ctx context.Context, buf []byte, dt dtype.DataType, peer int, sync bool) *Handle {
	return c.p2p(ctx, buf, dt, peer, true, sync)
}

// recvFrom launches a point-to-point receive from peer into buf, which the
// message must fill exactly.
func (c *Comm) recvFrom(ctx context.Context, buf []byte, dt dtype.DataType, peer int, sync bool) *Handle {
	return c.p2p(ctx, buf, dt, peer, false, sync)
}

func (c *Comm) p2p(ctx context.Context, buf []byte, dt dtype.DataType, peer int, isSend, sync bool) *Handle {
	h := header{kind: KindSendRecv, dt: dt, root: -1, count: uint64(len(buf) / esize(dt)), algo: AlgoDirect}
	// A bad peer has no pair to keep in step; any other bad argument is
	// found inside the operation, once it is numbered, so that it fails on
	// the peer too (through the abort) and the pair's next call still meets.
	if err := checkPeer(peer, c.Size()); err != nil {
		return failedHandle(h.fail(c, err))
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return failedHandle(h.fail(c, ErrClosed))
	}
	counter := &c.p2pRecvd[peer]
	if isSend {
		counter = &c.p2pSent[peer]
	}
	seq := *counter
	*counter++
	order := c.eager.enter()
	c.mu.Unlock()

	// Messages from the lower rank to the higher and back use separate
	// keys, so a Send and a Recv between the same two ranks never meet.
	from, to := c.rank, peer
	if !isSend {
		from, to = peer, c.rank
	}
	key := transport.OpKey{Comm: c.id ^ p2pSalt, Op: seq}
	if from < to {
		key.Comm ^= 1
	}
	o := c.newOperation(ctx, h, key, []int{c.ranks[peer]})
	o.order = order
	return o.dispatch(sync, func(o *operation) error {
		if err := firstErr(checkType(dt), checkWhole("message", buf, dt)); err != nil {
			return err
		}
		if isSend {
			return o.wait(o.send(peer, buf), peer)
		}
		return o.waitRecv(o.recv(peer, buf))
	})
}

// fail wraps an error found before an operation could start.
func (h header) fail(c *Comm, err error) error {
	o := &operation{c: c, hdr: h}
	return o.wrap(err)
}

func checkPeer(peer, size int) error {
	if peer < 0 || peer >= size {
		return &transport.PeerError{Rank: peer, Err: transport.ErrBadRank}
	}
	return nil
}
