package launcher

import (
	"context"
	"errors"
	"sync"

	"github.com/gocoll/gocoll/transport"
)

// ErrNoHeartbeat is wrapped by the error of a request that failed because
// its peer stopped heartbeating (test with errors.Is; it travels inside a
// *transport.PeerError naming the rank).
var ErrNoHeartbeat = errors.New("stopped answering: no heartbeat")

// guardedEndpoint is a transport.Endpoint that the health watcher can tell
// that a rank is dead. Then every request with that rank fails at once, now
// and later, with a *transport.PeerError naming it; and every operation
// recently used on this endpoint is aborted locally with that error, so a
// collective blocked on a live rank that waits for the dead one ends too
// (the collective then aborts it on every rank). Without this, a rank that
// hangs without closing its connections would leave its peers waiting until
// their operation's deadline.
type guardedEndpoint struct {
	inner transport.Endpoint
	notes failureNotes // nil: none

	mu     sync.Mutex
	dead   []error // by rank: a *transport.PeerError once declared dead
	lost   error   // set when every rank is unreachable (the store is gone)
	recent opRing
	// members: by OpKey.Comm, the ranks of the communicators the
	// collectives announced (CommMembers), the last commMembersMax of them
	members     map[uint64][]bool
	memberOrder []uint64

	toldMu sync.Mutex
	told   []string // by rank: the reason of its latest abort heard here

	free []*explainedRequest // released wrappers kept for reuse, at most explainedFreeMax; under mu
}

// explainedFreeMax is how many released request wrappers a guardedEndpoint
// keeps for reuse.
const explainedFreeMax = 256

var (
	_ transport.Endpoint     = (*guardedEndpoint)(nil)
	_ transport.AnySpinner   = (*guardedEndpoint)(nil)
	_ transport.HeadReceiver = (*guardedEndpoint)(nil)
	_ transport.Boards       = (*guardedEndpoint)(nil)
	_ transport.Completer    = (*explainedRequest)(nil)
	_ transport.Unwrapper    = (*explainedRequest)(nil)
	_ transport.Completer    = (*doneRequest)(nil)
)

func newGuardedEndpoint(inner transport.Endpoint) *guardedEndpoint {
	g := &guardedEndpoint{inner: inner, dead: make([]error, inner.Size()),
		recent: opRing{seen: map[transport.OpKey]struct{}{}}, told: make([]string, inner.Size())}
	if en, ok := inner.(transport.Ender); ok {
		en.OnRemoteAbort(g.heard)
	}
	return g
}

// heard remembers why a peer aborted an operation (the transport's
// OnRemoteAbort hook: it must not block).
func (g *guardedEndpoint) heard(err *transport.RemoteAbortError) {
	if err.Rank < 0 || err.Rank >= len(g.told) {
		return
	}
	why := err.Reason
	if len(why) > maxNoteBytes {
		why = why[:maxNoteBytes] + "..."
	}
	g.toldMu.Lock()
	g.told[err.Rank] = why
	g.toldMu.Unlock()
}

// toldBy returns the reason of rank's latest abort heard here, if any.
func (g *guardedEndpoint) toldBy(rank int) (string, bool) {
	if rank < 0 || rank >= len(g.told) {
		return "", false
	}
	g.toldMu.Lock()
	defer g.toldMu.Unlock()
	return g.told[rank], g.told[rank] != ""
}

func (g *guardedEndpoint) Rank() int { return g.inner.Rank() }
func (g *guardedEndpoint) Size() int { return g.inner.Size() }

// Traits forwards the transport's (see transport.TraitsOf).
func (g *guardedEndpoint) Traits() transport.Traits { return transport.TraitsOf(g.inner) }

// BoardHost forwards the transport's boards (transport.Boards), with the
// ranks the guard declared dead reported down.
func (g *guardedEndpoint) BoardHost(ranks []int) transport.BoardHost {
	h := transport.BoardHostOf(g.inner, ranks)
	if h == nil {
		return nil
	}
	return guardedBoards{h, g}
}

// guardedBoards is a transport's BoardHost seen through the guard.
type guardedBoards struct {
	transport.BoardHost
	g *guardedEndpoint
}

// Down reports a rank the guard declared dead, else asks the transport.
func (b guardedBoards) Down(rank int) error {
	b.g.mu.Lock()
	err := b.g.lost
	if err == nil && rank >= 0 && rank < len(b.g.dead) {
		err = b.g.dead[rank]
	}
	b.g.mu.Unlock()
	if err != nil {
		return err
	}
	return b.BoardHost.Down(rank)
}

func (g *guardedEndpoint) Send(peer int, tag transport.Tag, buf []byte) transport.Request {
	x, err := g.admit(peer, tag.OpKey)
	if err != nil {
		return failedRequest(err)
	}
	return g.explained(x, g.inner.Send(peer, tag, buf))
}

// SendWithHead forwards to the transport's (transport.HeadSender), as two
// Sends would be forwarded, but for one admission (both messages are of
// one operation, to one peer) and a head request that has completed
// without error (shared memory's, written into the ring): that one is
// returned as it is, with nothing to explain and nothing to release.
func (g *guardedEndpoint) SendWithHead(peer int, headTag transport.Tag, head []byte, tag transport.Tag, buf []byte) (transport.Request, transport.Request) {
	x, err := g.admit(peer, tag.OpKey)
	if err != nil {
		return failedRequest(err), failedRequest(err)
	}
	hr, r := transport.SendWithHead(g.inner, peer, headTag, head, tag, buf)
	if !sentOK(hr) {
		hr = g.explained(g.spare(), hr)
	}
	return hr, g.explained(x, r)
}

// sentOK reports whether r has completed without error.
func sentOK(r transport.Request) bool {
	if !transport.Completed(r) {
		return false
	}
	_, err := r.Wait(context.Background()) // completed: returns at once
	return err == nil
}

// spare takes a released wrapper, as admit does, or nil if none is kept
// or the guard has no notes.
func (g *guardedEndpoint) spare() *explainedRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.popFree()
}

// popFree takes a released wrapper, or nil if none is kept or the guard
// has no notes (then no wrapper explains anything). The caller holds g.mu.
func (g *guardedEndpoint) popFree() *explainedRequest {
	n := len(g.free)
	if n == 0 || g.notes == nil {
		return nil
	}
	x := g.free[n-1]
	g.free[n-1] = nil
	g.free = g.free[:n-1]
	return x
}

// pushFree keeps x for a later request, up to explainedFreeMax wrappers.
func (g *guardedEndpoint) pushFree(x *explainedRequest) {
	g.mu.Lock()
	if len(g.free) < explainedFreeMax {
		g.free = append(g.free, x)
	}
	g.mu.Unlock()
}

func (g *guardedEndpoint) Recv(peer int, tag transport.Tag, buf []byte) transport.Request {
	x, err := g.admit(peer, tag.OpKey)
	if err != nil {
		return failedRequest(err)
	}
	return g.explained(x, g.inner.Recv(peer, tag, buf))
}

// RecvHead forwards to the transport's (transport.HeadReceiver), as Recv
// is forwarded; nil, posting nothing, where the transport has none or
// takes no message of buf's size with a head.
func (g *guardedEndpoint) RecvHead(peer int, headTag transport.Tag, head []byte, tag transport.Tag, buf []byte) transport.Request {
	hr, ok := g.inner.(transport.HeadReceiver)
	if !ok {
		return nil
	}
	x, err := g.admit(peer, tag.OpKey)
	if err != nil {
		return failedRequest(err)
	}
	r := hr.RecvHead(peer, headTag, head, tag, buf)
	if r == nil {
		g.unused(x)
		return nil
	}
	return g.explained(x, r)
}

// unused gives back a wrapper admit took for a request that was not made.
func (g *guardedEndpoint) unused(x *explainedRequest) {
	if x != nil {
		g.pushFree(x)
	}
}

// Abort records why this rank gave up on op where its peers can read it
// (see failureNotes), then aborts op.
func (g *guardedEndpoint) Abort(op transport.OpKey, peers []int, reason error) {
	if g.notes != nil && reason != nil {
		g.notes.publish(reason)
	}
	g.inner.Abort(op, peers, reason)
}

// explained wraps r in x, a released wrapper admit took, or in a new one;
// r itself where the guard has no notes.
func (g *guardedEndpoint) explained(x *explainedRequest, r transport.Request) transport.Request {
	if g.notes == nil {
		return r
	}
	if x == nil {
		return &explainedRequest{Request: r, g: g}
	}
	x.Request = r
	return x
}

func (g *guardedEndpoint) Close() error { return g.inner.Close() }

// SpinAny forwards to the transport's (transport.AnySpinner), which sees
// its requests through the wrappers (explainedRequest.Unwrap), so that a
// collective's wait for the first of several requests (the trees') polls
// under the guard as without it; a request failed by the guard is
// completed. Over a transport that cannot spin it only checks reqs. (The
// guard is no transport.AnyWaiter: the launcher runs over none.)
func (g *guardedEndpoint) SpinAny(ctx context.Context, reqs []transport.Request) int {
	if s, ok := g.inner.(transport.AnySpinner); ok {
		return s.SpinAny(ctx, reqs)
	}
	return transport.CompletedAny(reqs)
}

// admit returns the error of a request with peer, or notes op as recent
// and takes a released wrapper for the request (nil if none is kept or the
// guard has no notes): one lock per request, not one for each.
func (g *guardedEndpoint) admit(peer int, op transport.OpKey) (*explainedRequest, error) {
	g.mu.Lock()
	if g.lost != nil {
		g.mu.Unlock()
		return nil, g.lost
	}
	if peer >= 0 && peer < len(g.dead) && g.dead[peer] != nil {
		err := g.dead[peer]
		g.mu.Unlock()
		return nil, err
	}
	g.recent.add(op)
	x := g.popFree()
	g.mu.Unlock()
	return x, nil
}
