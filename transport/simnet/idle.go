package simnet

import "time"

// idleWake is how long a world that is not stuck must stand still for a
// wake to count in it (Endpoint.sleep): twice collective's longest tick
// (100 ms), so that the wake follows a whole tick with nothing moving,
// and a rank that is only slow (its goroutine not running for a while on
// a loaded machine) is not taken for one that never comes.
const idleWake = 200 * time.Millisecond

// stillness watches, for a wait whose wake has come in a world that is
// not stuck, whether the world stands still: no transport call but waits
// and no step of virtual time (World.moves) for idleWake of real time, as
// AdvanceIdle judges a world idle. Until then the wait goes on.
type stillness struct {
	w     *World
	moves uint64    // w.moves at since
	since time.Time // when the world was last seen moving
	timer *time.Timer
	due   time.Time // the timer's
}

// enough reports whether the world has stood still for idleWake; if not,
// it arms the check for when it may have. A check that comes more than
// idleWake/2 late (the process was not running: nor were the ranks that
// would have moved) starts the stillness anew.
func (s *stillness) enough() bool {
	s.w.mu.Lock()
	moves := s.w.moves
	s.w.mu.Unlock()
	now := time.Now()
	if moves != s.moves || (!s.due.IsZero() && now.Sub(s.due) > idleWake/2) {
		s.moves, s.since = moves, now
	}
	left := idleWake - now.Sub(s.since)
	if left <= 0 {
		return true
	}
	s.due = now.Add(left)
	if s.timer == nil {
		s.timer = time.NewTimer(left)
	} else {
		s.timer.Reset(left)
	}
	return false
}

// check is the channel of the armed check, or nil before the first.
func (s *stillness) check() <-chan time.Time {
	if s.timer == nil {
		return nil
	}
	return s.timer.C
}

// stop releases the timer.
func (s *stillness) stop() {
	if s.timer != nil {
		s.timer.Stop()
	}
}
