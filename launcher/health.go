package launcher

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/metaroce"
)

// ErrNoHeartbeat is wrapped by the error of a request that failed because
// its peer stopped heartbeating (test with errors.Is; it travels inside a
// *transport.PeerError naming the rank).
var ErrNoHeartbeat = errors.New("stopped answering: no heartbeat")

// recentOpsMax bounds how many distinct operations a guardedEndpoint
// remembers, and so how many it aborts when a rank is declared dead.
// Operations in flight at once are far fewer.
const recentOpsMax = 256

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

// declareDead fails every request with rank from now on with a
// *transport.PeerError wrapping cause, and aborts the recent operations
// here, but those of communicators announced without rank (CommMembers). Only the first declaration of a rank counts; it reports whether
// this one did.
func (g *guardedEndpoint) declareDead(rank int, cause error) bool {
	g.mu.Lock()
	if rank < 0 || rank >= len(g.dead) || g.dead[rank] != nil || rank == g.inner.Rank() {
		g.mu.Unlock()
		return false
	}
	err := &transport.PeerError{Rank: rank, Err: cause}
	g.dead[rank] = err
	var ops []transport.OpKey
	for _, op := range g.recent.list() {
		if m, ok := g.members[op.Comm]; !ok || m[rank] {
			ops = append(ops, op) // not known to be without rank
		}
	}
	g.mu.Unlock()
	for _, op := range ops {
		g.inner.Abort(op, nil, err)
	}
	return true
}

// commMembersMax bounds the communicators whose members a guardedEndpoint
// remembers (a bool per rank each); an operation of one it has forgotten
// is aborted at any rank's death, as one of a communicator never announced.
const commMembersMax = 64

// CommMembers notes that the operations under each of keys (OpKey.Comm
// values) are among ranks alone, so that the death of another rank does
// not end them: a communicator that Shrink made without a failed rank goes
// on when the watcher declares that rank dead later
// (collective.MemberNotifier).
func (g *guardedEndpoint) CommMembers(keys []uint64, ranks []int) {
	m := make([]bool, len(g.dead))
	for _, r := range ranks {
		if r >= 0 && r < len(m) {
			m[r] = true
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.members == nil {
		g.members = make(map[uint64][]bool)
	}
	for _, k := range keys {
		if _, ok := g.members[k]; !ok {
			if len(g.memberOrder) == commMembersMax {
				delete(g.members, g.memberOrder[0])
				g.memberOrder = g.memberOrder[1:]
			}
			g.memberOrder = append(g.memberOrder, k)
		}
		g.members[k] = m
	}
}

// isDead reports whether rank has been declared dead.
func (g *guardedEndpoint) isDead(rank int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.lost != nil || rank >= 0 && rank < len(g.dead) && g.dead[rank] != nil
}

// declareLost fails every request from now on with err and aborts the
// recent operations: no rank can be vouched for any more.
func (g *guardedEndpoint) declareLost(err error) {
	g.mu.Lock()
	if g.lost != nil {
		g.mu.Unlock()
		return
	}
	g.lost = err
	ops := g.recent.list()
	g.mu.Unlock()
	for _, op := range ops {
		g.inner.Abort(op, nil, err)
	}
}

// failureNotes is where ranks leave the reason they aborted an operation,
// so that a peer whose connection to them then breaks (because they exited
// on that error) can say what went wrong first. Without it, when rank 2
// dies and rank 3 exits on the error that causes, rank 0 may see only
// "rank 3 closed the connection": rank 3's abort message, queued just
// before it exited, need not have left.
type failureNotes interface {
	// publish records reason as this rank's latest failure.
	publish(reason error)
	// explain returns the latest failure recorded by rank, if any.
	explain(rank int) (string, bool)
}

// explainedRequest adds to a *transport.PeerError what the failed peer
// said about its own failure: the reason of its latest abort heard here
// (which needs no store, and so works where the store is behind the same
// cut as the peer), or else the note it recorded in the store.
type explainedRequest struct {
	transport.Request
	g *guardedEndpoint // its notes and the aborts heard (toldBy)

	once sync.Once
	err  error // the explained error, once computed
}

// Spin forwards to the transport's request where it can spin (see
// transport.Spinner); elsewhere it reports whether the request is done.
func (r *explainedRequest) Spin(ctx context.Context) bool {
	if s, ok := r.Request.(transport.Spinner); ok {
		return s.Spin(ctx)
	}
	select {
	case <-r.Done():
		return true
	default:
		return false
	}
}

// Completed forwards to the transport's request (transport.Completer): a
// waiter that polls several requests makes no Done channel for it.
func (r *explainedRequest) Completed() bool { return transport.Completed(r.Request) }

// Unwrap returns the transport's request (transport.Unwrapper), by which
// the transport's SpinAny knows it.
func (r *explainedRequest) Unwrap() transport.Request { return r.Request }

// Release hands the transport's request back for reuse (transport.Releaser):
// a shm request is otherwise never reused under the guard, and every
// request costs a new one. The wrapper goes back to its guard, which hands
// it to a later Send or Recv, once the request has completed (by Release's
// contract nobody refers to it any more); one not completed is left to the
// collector.
func (r *explainedRequest) Release() {
	select {
	case <-r.Request.Done():
	default:
		return
	}
	transport.Release(r.Request)
	g := r.g
	r.Request, r.once, r.err = nil, sync.Once{}, nil
	g.pushFree(r)
}

func (r *explainedRequest) Wait(ctx context.Context) (int, error) {
	n, err := r.Request.Wait(ctx)
	if err == nil || ctx.Err() != nil {
		return n, err // (pe below escapes: declared here, it cost an allocation per Wait)
	}
	var pe *transport.PeerError
	if !errors.As(err, &pe) {
		return n, err
	}
	r.once.Do(func() {
		r.err = err
		why, ok := r.g.toldBy(pe.Rank)
		if !ok && !errors.Is(pe.Err, metaroce.ErrPeerTimeout) {
			// (A peer that stopped answering on every path, MetaRoCE's
			// peer timeout, left no note worth a store read, and the
			// store is likely behind the same cut: the read would only
			// add noteTimeout.)
			why, ok = r.g.notes.explain(pe.Rank)
		}
		if ok {
			r.err = &transport.PeerError{Rank: pe.Rank, Err: fmt.Errorf("%w (rank %d had failed: %s)", pe.Err, pe.Rank, why)}
		}
	})
	return n, r.err
}

// opRing is a set of the last recentOpsMax distinct operations, in a
// fixed circular buffer: add costs no allocation once the map has grown,
// and none at all for the operation added last (an operation posts
// several requests in a row).
type opRing struct {
	order [recentOpsMax]transport.OpKey
	next  int                          // where the next distinct operation goes
	seen  map[transport.OpKey]struct{} // the operations in order, each once
}

func (r *opRing) add(op transport.OpKey) {
	if len(r.seen) > 0 && r.order[(r.next+recentOpsMax-1)%recentOpsMax] == op {
		return
	}
	if _, ok := r.seen[op]; ok {
		return
	}
	if len(r.seen) == recentOpsMax {
		delete(r.seen, r.order[r.next])
	}
	r.order[r.next] = op
	r.next = (r.next + 1) % recentOpsMax
	r.seen[op] = struct{}{}
}

// list returns the operations, oldest first.
func (r *opRing) list() []transport.OpKey {
	n := len(r.seen)
	out := make([]transport.OpKey, 0, n)
	for i := range n {
		out = append(out, r.order[(r.next-n+i+recentOpsMax)%recentOpsMax])
	}
	return out
}

// doneRequest is a request that failed when it was posted.
type doneRequest struct {
	err  error
	done chan struct{}
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func failedRequest(err error) transport.Request { return &doneRequest{err: err, done: closedChan} }

func (r *doneRequest) Wait(context.Context) (int, error) { return 0, r.err }
func (r *doneRequest) Done() <-chan struct{}             { return r.done }
func (r *doneRequest) Cancel()                           {}
func (r *doneRequest) Completed() bool                   { return true }
