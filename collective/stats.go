package collective

import "github.com/gocoll/gocoll/transport"

// Stats returns a snapshot of the traffic between this rank and each other
// member of the communicator, as its transport counts it (see
// [transport.Stats]): per peer, the transport that reaches it, messages
// and bytes each way, and on MetaRoCE the target rates and each path's
// bytes, share, resends, smoothed RTT, window and state. Peer ranks are
// the communicator's; Stats.Rank is this rank in it. The counters are the
// transport's, so they cover every communicator over the same transport
// (a communicator from Split shares its parent's) since it was connected;
// subtract two snapshots to see one stretch of work. The snapshot is a
// copy the caller owns; it holds no lock. A transport without statistics
// gives no peers.
func (c *Comm) Stats() transport.Stats {
	s := transport.StatsOf(c.ep)
	out := transport.Stats{Rank: c.rank}
	for r, ep := range c.ranks {
		if r == c.rank {
			continue
		}
		if p, ok := s.Peer(ep); ok {
			p.Rank = r
			out.Peers = append(out.Peers, p)
		}
	}
	return out
}
