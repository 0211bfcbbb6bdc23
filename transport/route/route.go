// Package route joins several transports into one [transport.Endpoint]:
// each peer rank is reached through the transport given for it. A job uses
// it to reach the ranks of its own host through shared memory and the
// others over the network.
//
// Matching is per (peer, tag), and every message to or from one peer uses
// that peer's transport, so ordering and matching are each transport's
// own. Abort ends the operation on every joined transport, each telling
// the told peers it reaches; and when a peer's abort arrives through one
// transport, the others end the operation too (through [transport.Ender]),
// so that no request of it, to or from any rank, is left waiting. The
// endpoint is a transport.Ender itself: its OnRemoteAbort hears the
// aborts arriving through every joined transport. Close closes them all.
//
// Limits: the endpoint keeps no queue or table of its own (every request
// is its transport's, within that transport's bounds), only the list of
// transports by peer.
package route

import (
	"context"
	"errors"
	"fmt"

	"github.com/gocoll/gocoll/transport"
)

// Endpoint sends to and receives from each peer through its transport.
type Endpoint struct {
	rank    int
	byPeer  []transport.Endpoint // by rank
	all     []transport.Endpoint // each joined transport once, in first-use order
	onAbort transport.AbortHook  // see OnRemoteAbort
}

var (
	_ transport.Endpoint   = (*Endpoint)(nil)
	_ transport.Ender      = (*Endpoint)(nil)
	_ transport.AnySpinner = (*Endpoint)(nil)
	_ transport.Boards     = (*Endpoint)(nil)
)

// New returns an endpoint that reaches rank r through byPeer[r]. Every
// element must be non-nil and be this rank of len(byPeer) ranks; when there
// are several distinct transports, each must implement transport.Ender.
// New registers their OnRemoteAbort. The endpoint owns the transports: its
// Close closes each once.
//
// also are transports joined even if no peer is reached through them
// (nil ones are skipped): they count in Traits and are aborted and closed
// with the others. Ranks that join the same kinds of transport see the
// same Traits whichever peers each reaches through which, as a world's
// collectives need.
func New(byPeer []transport.Endpoint, also ...transport.Endpoint) (*Endpoint, error) {
	if len(byPeer) == 0 {
		return nil, errors.New("route: no ranks")
	}
	e := &Endpoint{byPeer: byPeer, rank: -1}
	seen := map[transport.Endpoint]bool{}
	join := func(what string, ep transport.Endpoint) error {
		if e.rank < 0 {
			e.rank = ep.Rank()
		}
		if ep.Rank() != e.rank || ep.Size() != len(byPeer) {
			return fmt.Errorf("route: %s is rank %d of %d, want rank %d of %d",
				what, ep.Rank(), ep.Size(), e.rank, len(byPeer))
		}
		if !seen[ep] {
			seen[ep] = true
			e.all = append(e.all, ep)
		}
		return nil
	}
	for r, ep := range byPeer {
		if ep == nil {
			return nil, fmt.Errorf("route: no transport for rank %d", r)
		}
		if err := join(fmt.Sprintf("rank %d's transport", r), ep); err != nil {
			return nil, err
		}
	}
	for i, ep := range also {
		if ep == nil {
			continue
		}
		if err := join(fmt.Sprintf("extra transport %d", i), ep); err != nil {
			return nil, err
		}
	}
	e.joinSpins()
	if len(e.all) == 1 {
		if en, ok := e.all[0].(transport.Ender); ok {
			en.OnRemoteAbort(e.onAbort.Call)
		}
		return e, nil
	}
	enders := make([]transport.Ender, len(e.all))
	for i, ep := range e.all {
		en, ok := ep.(transport.Ender)
		if !ok {
			return nil, fmt.Errorf("route: a %T cannot be joined with other transports (it is no transport.Ender)", ep)
		}
		enders[i] = en
	}
	for i, en := range enders {
		en.OnRemoteAbort(func(err *transport.RemoteAbortError) {
			for j, other := range enders {
				if j != i {
					other.End(err.Op, err)
				}
			}
			e.onAbort.Call(err)
		})
	}
	return e, nil
}

// joinSpins makes the spin of each joined transport that can poll others
// (transport.JointSpinner) poll the other ones too, once a round: a waiter
// on requests of several transports (the hierarchical AllReduce's waits
// on a host's peer and on the network at once) then finds the one that
// completes first, whichever transport it is on, instead of spinning out
// the first transport's budget while the other's messages wait.
func (e *Endpoint) joinSpins() {
	var js []transport.JointSpinner
	for _, ep := range e.all {
		if j, ok := ep.(transport.JointSpinner); ok {
			js = append(js, j)
		}
	}
	if len(js) < 2 {
		return
	}
	for i, j := range js {
		others := make([]transport.JointSpinner, 0, len(js)-1)
		others = append(others, js[:i]...)
		others = append(others, js[i+1:]...)
		j.SetSpinAlso(func() {
			for _, o := range others {
				o.SpinStep()
			}
		})
	}
}

// Rank implements transport.Endpoint.
func (e *Endpoint) Rank() int { return e.rank }

// Size implements transport.Endpoint.
func (e *Endpoint) Size() int { return len(e.byPeer) }

// Traits reports shared memory only if every joined transport has it, and
// the largest chunk size any of them prefers: the same as a world's ranks
// that reach every peer through one of those transports alone would see
// (a rank alone on its host has only the network transport), so that all
// ranks pick the same chunk size.
func (e *Endpoint) Traits() transport.Traits {
	t := transport.Traits{SharedMemory: true}
	for _, ep := range e.all {
		et := transport.TraitsOf(ep)
		t.SharedMemory = t.SharedMemory && et.SharedMemory
		t.ChunkBytes = max(t.ChunkBytes, et.ChunkBytes)
	}
	return t
}

// BoardHost implements transport.Boards: the boards of the transport that
// reaches every rank of ranks, if one does and has boards.
func (e *Endpoint) BoardHost(ranks []int) transport.BoardHost {
	var ep transport.Endpoint
	for _, r := range ranks {
		if r < 0 || r >= len(e.byPeer) || ep != nil && e.byPeer[r] != ep {
			return nil
		}
		ep = e.byPeer[r]
	}
	if ep == nil {
		return nil
	}
	return transport.BoardHostOf(ep, ranks)
}

// Send implements transport.Endpoint through peer's transport.
func (e *Endpoint) Send(peer int, tag transport.Tag, buf []byte) transport.Request {
	if peer < 0 || peer >= len(e.byPeer) {
		return e.all[0].Send(peer, tag, buf) // fails with the transport's ErrBadRank
	}
	return e.byPeer[peer].Send(peer, tag, buf)
}

// SendWithHead implements transport.HeadSender through peer's transport.
func (e *Endpoint) SendWithHead(peer int, headTag transport.Tag, head []byte, tag transport.Tag, buf []byte) (transport.Request, transport.Request) {
	if peer < 0 || peer >= len(e.byPeer) {
		return e.Send(peer, headTag, head), e.Send(peer, tag, buf)
	}
	return transport.SendWithHead(e.byPeer[peer], peer, headTag, head, tag, buf)
}

// Recv implements transport.Endpoint through peer's transport.
func (e *Endpoint) Recv(peer int, tag transport.Tag, buf []byte) transport.Request {
	if peer < 0 || peer >= len(e.byPeer) {
		return e.all[0].Recv(peer, tag, buf)
	}
	return e.byPeer[peer].Recv(peer, tag, buf)
}

// SpinAny implements transport.AnySpinner: each joined transport that is
// one polls in turn, for its own requests among reqs (one with none
// pending returns at once), until one of reqs has completed.
func (e *Endpoint) SpinAny(ctx context.Context, reqs []transport.Request) int {
	for _, ep := range e.all {
		if s, ok := ep.(transport.AnySpinner); ok {
			if i := s.SpinAny(ctx, reqs); i >= 0 {
				return i
			}
		}
	}
	return transport.CompletedAny(reqs)
}

// Abort implements transport.Endpoint: every joined transport ends op here
// and tells the ranks of peers it reaches.
func (e *Endpoint) Abort(op transport.OpKey, peers []int, reason error) {
	for _, ep := range e.all {
		var mine []int
		for _, p := range peers {
			if p >= 0 && p < len(e.byPeer) && e.byPeer[p] == ep {
				mine = append(mine, p)
			}
		}
		ep.Abort(op, mine, reason)
	}
}

// End implements transport.Ender: every joined transport that can ends op
// here.
func (e *Endpoint) End(op transport.OpKey, err error) {
	for _, ep := range e.all {
		if en, ok := ep.(transport.Ender); ok {
			en.End(op, err)
		}
	}
}

// OnRemoteAbort implements transport.Ender: f is called with the abort by
// which a peer ended an operation through any joined transport, once the
// operation has ended on all of them.
func (e *Endpoint) OnRemoteAbort(f func(*transport.RemoteAbortError)) { e.onAbort.Set(f) }

// Close implements transport.Endpoint: it closes every joined transport.
func (e *Endpoint) Close() error {
	e.onAbort.Set(nil)
	for _, ep := range e.all {
		if j, ok := ep.(transport.JointSpinner); ok {
			j.SetSpinAlso(nil)
		}
	}
	var errs []error
	for _, ep := range e.all {
		if en, ok := ep.(transport.Ender); ok {
			en.OnRemoteAbort(nil)
		}
		errs = append(errs, ep.Close())
	}
	return errors.Join(errs...)
}
