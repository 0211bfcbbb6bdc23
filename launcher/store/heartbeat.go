package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// HeartbeatKey returns the key of rank's heartbeat counter: "hb/<rank>".
func HeartbeatKey(rank int) string { return "hb/" + strconv.Itoa(rank) }

// Heartbeat adds 1 to rank's heartbeat counter (see HeartbeatKey) at once
// and then every interval, until ctx ends; then it returns nil. It returns
// the first error of the store otherwise. Run it in its own goroutine, on a
// Prefixed view of the job's store.
func Heartbeat(ctx context.Context, s Store, rank int, interval time.Duration) error {
	if rank < 0 || interval <= 0 {
		return fmt.Errorf("%w: heartbeat of rank %d every %v", ErrInvalid, rank, interval)
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	key := HeartbeatKey(rank)
	for {
		if _, err := s.Add(ctx, key, 1); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("store: heartbeat of rank %d: %w", rank, err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// Liveness decides which ranks' heartbeats have stalled, from the counter
// values it is shown. It does no I/O and reads no clock: the time of every
// observation is passed in. A Liveness is not safe for concurrent use.
type Liveness struct {
	timeout time.Duration
	ranks   []beat
}

// beat is what Liveness knows of one rank.
type beat struct {
	counter int64
	seen    bool      // a counter was observed
	since   time.Time // when counter last changed, or the start
}

// NewLiveness returns a Liveness for ranks 0..size-1 that calls a rank
// stale once its counter has not changed for timeout. Ranks never observed
// count from start.
func NewLiveness(size int, timeout time.Duration, start time.Time) (*Liveness, error) {
	if size < 1 || timeout <= 0 {
		return nil, fmt.Errorf("%w: liveness of %d ranks with timeout %v", ErrInvalid, size, timeout)
	}
	l := &Liveness{timeout: timeout, ranks: make([]beat, size)}
	for i := range l.ranks {
		l.ranks[i].since = start
	}
	return l, nil
}

// Observe records that rank's counter read counter at time now. Any change
// of the counter (even downwards, as after a restart) counts as a beat.
func (l *Liveness) Observe(now time.Time, rank int, counter int64) error {
	if rank < 0 || rank >= len(l.ranks) {
		return fmt.Errorf("%w: rank %d outside [0, %d)", ErrInvalid, rank, len(l.ranks))
	}
	b := &l.ranks[rank]
	if !b.seen || b.counter != counter {
		*b = beat{counter: counter, seen: true, since: now}
	}
	return nil
}

// Stale returns, ascending, the ranks whose counter has not changed for at
// least the timeout as of now.
func (l *Liveness) Stale(now time.Time) []int {
	var stale []int
	for r, b := range l.ranks {
		if now.Sub(b.since) >= l.timeout {
			stale = append(stale, r)
		}
	}
	return stale
}

// Watch reads the heartbeat counters of ranks 0..size-1 every poll and
// calls report with the stale ranks (see Liveness) whenever that set
// changes, including when it becomes empty. It returns nil when ctx ends,
// or the first error of the store. A counter that is not a number counts
// as no beat.
func Watch(ctx context.Context, s Store, size int, timeout, poll time.Duration, report func(stale []int)) error {
	if poll <= 0 {
		return fmt.Errorf("%w: watch polling every %v", ErrInvalid, poll)
	}
	live, err := NewLiveness(size, timeout, time.Now())
	if err != nil {
		return err
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	var last []int
	for {
		for r := range size {
			v, ok, err := s.TryGet(ctx, HeartbeatKey(r))
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("store: watching heartbeats: %w", err)
			}
			if n, perr := strconv.ParseInt(string(v), 10, 64); ok && perr == nil {
				_ = live.Observe(time.Now(), r, n) // r is in range
			}
		}
		if stale := live.Stale(time.Now()); !slices.Equal(stale, last) {
			report(stale)
			last = stale
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
