//go:build linux

package shm

import "github.com/gocoll/gocoll/transport"

var _ transport.StatsReporter = (*Endpoint)(nil)

// TransportStats implements transport.StatsReporter: per peer, the
// messages completed with it and their bytes, and whether it can still
// be reached.
func (e *Endpoint) TransportStats() transport.Stats {
	s := transport.Stats{Rank: e.rank, Peers: make([]transport.PeerStats, 0, max(e.size-1, 0))}
	e.mu.Lock()
	defer e.mu.Unlock()
	for r, p := range e.peers {
		if r == e.rank || p == nil {
			continue
		}
		ps := transport.PeerStats{Rank: r, Transport: transport.StatsSHM, Up: e.down[r] == nil, Traffic: p.count.Load()}
		if e.down[r] != nil {
			ps.Err = e.down[r].Error()
		}
		s.Peers = append(s.Peers, ps)
	}
	return s
}
