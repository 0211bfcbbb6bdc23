package store

import "sync/atomic"

// ServerStats counts what a Server saw since it started: its connections,
// and every one it refused or closed and why. Counters only grow.
type ServerStats struct {
	Accepted      uint64 // connections accepted
	Authenticated uint64 // connections that proved the job key
	// RefusedKey counts handshakes whose proof was wrong: clients without
	// this job's key (another job's, or a stranger).
	RefusedKey uint64
	// BadFrames counts connections closed for a malformed, oversized or
	// unexpected frame, in the handshake or after it.
	BadFrames uint64
	// BadTags counts frames, after the handshake, whose tag did not
	// verify: forged, altered, replayed or reordered.
	BadTags uint64
	// TimedOut counts connections that did not finish their handshake
	// within HandshakeTimeout, or a frame within FrameTimeout.
	TimedOut uint64
	// Evicted counts connections closed in their handshake to make room
	// for newer ones (MaxHandshakes).
	Evicted uint64
	// OverLimit counts authenticated connections refused at MaxConns.
	OverLimit uint64
}

// Stats returns a snapshot of the server's counters.
func (s *Server) Stats() ServerStats {
	c := &s.stats
	return ServerStats{
		Accepted: c.accepted.Load(), Authenticated: c.authenticated.Load(), RefusedKey: c.refusedKey.Load(),
		BadFrames: c.badFrames.Load(), BadTags: c.badTags.Load(), TimedOut: c.timedOut.Load(),
		Evicted: c.evicted.Load(), OverLimit: c.overLimit.Load(),
	}
}

type serverCounters struct {
	accepted, authenticated, refusedKey, badFrames, badTags, timedOut, evicted, overLimit atomic.Uint64
}
