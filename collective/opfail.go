package collective

import (
	"context"
	"errors"
	"fmt"

	"github.com/gocoll/gocoll/transport"
)

// fail ends the operation with err: it aborts the operation on this rank
// and every other, and waits until the transport lets go of every buffer.
// It returns the error the caller should return.
func (o *operation) fail(err error) error {
	if o.err != nil {
		return o.err
	}
	if o.interrupted(err) {
		return errSettleInterrupted // not failed: settled later (eager.go)
	}
	o.err = err
	if o.onBoard || o.c.board.up.Load() {
		o.boardFail(err) // where its peers on the board look (waits, an eager root's next call)
	}
	o.c.ep.Abort(o.key, o.abort, err)
	for _, r := range o.reqs {
		r.Cancel()
	}
	for i := range o.peers {
		if r := o.peers[i].hdrReq; r != nil {
			r.Cancel()
		}
		if r := o.peers[i].early; r != nil {
			r.Cancel()
		}
	}
	return err
}

// peerErr names the communicator rank in a transport error about it.
func (o *operation) peerErr(peer int, err error) error {
	if ctxErr := o.ctx.Err(); ctxErr != nil {
		// Our own deadline passed too: that is the error to report.
		return fmt.Errorf("waiting for rank %d: %w%s%s", peer, ctxErr, o.neverArrived(), o.verdict())
	}
	var ra *transport.RemoteAbortError
	if errors.As(err, &ra) {
		return fmt.Errorf("rank %d failed: %s", o.c.commRank(ra.Rank), ra.Reason)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fmt.Errorf("waiting for rank %d: %w%s%s", peer, err, o.neverArrived(), o.verdict())
	}
	return fmt.Errorf("with rank %d: %w", peer, err)
}

// neverArrived names, for an error at the deadline, the peers this rank
// talks to whose header of the operation has not come: they never called
// it, and they, not the peer waited on, are what to look at. The abort
// carries the note to the other ranks.
func (o *operation) neverArrived() string {
	if o.onBoard {
		return o.boardNeverWrote()
	}
	var missing []int
	for i := range o.peers {
		p := &o.peers[i]
		if !p.touched || p.checked || p.hdrReq == nil {
			continue
		}
		select {
		case <-p.hdrReq.Done():
			// Ended: it came, unless the wait's end cancelled it.
			if _, err := p.hdrReq.Wait(context.Background()); err == nil {
				continue
			}
		default:
		}
		missing = append(missing, i)
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%s never arrived: no header of this operation from it)", rankList(missing))
}
