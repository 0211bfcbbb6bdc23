package tcp

import "github.com/gocoll/gocoll/transport"

var _ transport.StatsReporter = (*Endpoint)(nil)

// TransportStats implements transport.StatsReporter: per peer, the
// messages completed with it and their bytes, and whether its
// connections are up.
func (e *Endpoint) TransportStats() transport.Stats {
	s := transport.Stats{Rank: e.rank, Peers: make([]transport.PeerStats, 0, max(e.size-1, 0)), AuthDropped: e.authDropped.Load()}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range e.peers {
		if p.rank == e.rank {
			continue
		}
		ps := transport.PeerStats{Rank: p.rank, Transport: transport.StatsTCP, Up: p.failed == nil, Traffic: p.count.Load()}
		if p.failed != nil {
			ps.Err = p.failed.Error()
		}
		s.Peers = append(s.Peers, ps)
	}
	return s
}
