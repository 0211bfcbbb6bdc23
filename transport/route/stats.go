package route

import "github.com/gocoll/gocoll/transport"

var _ transport.StatsReporter = (*Endpoint)(nil)

// TransportStats implements transport.StatsReporter: each peer's
// statistics as the transport that reaches it reports them (a peer whose
// transport reports none is left out).
func (e *Endpoint) TransportStats() transport.Stats {
	byEp := make(map[transport.Endpoint]transport.Stats, len(e.all))
	for _, ep := range e.all {
		byEp[ep] = transport.StatsOf(ep)
	}
	s := transport.Stats{Rank: e.rank}
	for r, ep := range e.byPeer {
		if r == e.rank {
			continue
		}
		if ps, ok := byEp[ep].Peer(r); ok {
			s.Peers = append(s.Peers, ps)
		}
	}
	return s
}
