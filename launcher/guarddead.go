package launcher

import "github.com/gocoll/gocoll/transport"

// recentOpsMax bounds how many distinct operations a guardedEndpoint
// remembers, and so how many it aborts when a rank is declared dead.
// Operations in flight at once are far fewer.
const recentOpsMax = 256

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
