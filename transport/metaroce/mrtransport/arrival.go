package mrtransport

import "time"

// arrival converts a datagram's kernel receive time stamp (ns since the
// Unix epoch on the wall clock; 0: none) into the engine's time base for
// the core (metaroce.Endpoint.HandleDatagramAt): now, the time the batch
// was read, less how long before read, on the wall clock, the datagram
// arrived. The two clocks' offset is thus sampled at every read, so a
// step of the wall clock shifts one batch at most, and the result is
// clamped to [the path's previous arrival, now]: a stamp from the future
// or the far past cannot make a delay negative or time run backwards.
// A datagram without a stamp arrived at now, and so does every datagram
// unless Config.ArrivalTimes. The caller holds mu.
func (e *engine) arrival(path int, now time.Duration, read time.Time, stamp int64) time.Duration {
	if !e.arrivalTimes {
		return now
	}
	at := now
	if stamp > 0 {
		at = now - time.Duration(read.UnixNano()-stamp)
	}
	if path < 0 || path >= len(e.arrived) {
		return now
	}
	at = min(max(at, e.arrived[path]), now)
	e.arrived[path] = at
	return at
}
