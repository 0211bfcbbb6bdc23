package mrtransport

import "time"

// maxStampAge bounds how long before its read a datagram may count as
// having arrived: a stamp older than that (a reader descheduled that long,
// or a wall-clock step the offset check missed) gives now - maxStampAge,
// a one-way delay or RTT sample too long rather than one too short.
const maxStampAge = 50 * time.Millisecond

// stepSlack is the change of the wall clock's offset from the monotonic
// clock between two reads that still counts as slewing, besides the
// kernel's 500 ppm of the time between them; more is a step.
const stepSlack = 100 * time.Microsecond

// arrival converts a datagram's kernel receive time stamp (ns since the
// Unix epoch on the wall clock; 0: none) into the engine's time base for
// the core (metaroce.Endpoint.HandleDatagramAt): now, the time the batch
// was read, less how long before read, on the wall clock, the datagram
// arrived. The result is clamped to [the path's previous arrival, now],
// and to at most maxStampAge before now: a stamp from the future or the
// far past cannot make a delay negative, time run backwards or an RTT
// sample shorter than its network part by more than that.
//
// The wall clock may be stepped (NTP, a VM's resume) between the stamp
// and the read, which would shift the arrival by the step: the wall
// clock's offset from the monotonic one is kept from read to read, and a
// read whose offset moved by more than a slew's 500 ppm plus stepSlack
// trusts none of its stamps (the batch arrived at now), which the core's
// windowed one-way delay minimum would otherwise keep for up to two of
// its floor windows (review C15 F1). The offset is one per engine, but
// each path has its own reader: once any read has seen a step (at
// stepAt), a stamp that converts to before stepAt is not trusted either
// (arrival now), on every path (review B16 F1): a stamp taken before a
// forward step, converted with the new offset, lands before the read
// that saw the step; one taken after it, after (or is distrusted in the
// few ms between, a delay too long rather than too short). A step
// backwards makes pre-step stamps late, never early.
//
// A datagram without a stamp arrived at now, and so does every datagram
// unless Config.ArrivalTimes. The caller holds mu.
func (e *engine) arrival(path int, now time.Duration, read time.Time, stamp int64) time.Duration {
	if !e.arrivalTimes || path < 0 || path >= len(e.arrived) {
		return now
	}
	at := now
	if stamp > 0 {
		if e.wallSteady(read.Sub(e.start), read.UnixNano()) {
			at = now - time.Duration(read.UnixNano()-stamp)
			if e.stepSeen && at < e.stepAt {
				at = now // stamped before the step another read saw
			}
		} else {
			e.stepAt, e.stepSeen = now, true
		}
	}
	at = min(max(at, e.arrived[path], now-maxStampAge), now)
	e.arrived[path] = at
	return at
}

// wallSteady records the wall clock's offset from the monotonic clock at a
// read, mono after the engine's start and wall ns since the epoch, and
// reports whether it moved by no more than a slew since the previous read
// (true at the first). The caller holds mu.
func (e *engine) wallSteady(mono time.Duration, wall int64) bool {
	off := time.Duration(wall) - mono
	prevMono, prevOff, seen := e.offsetAt, e.offset, e.offsetSeen
	e.offsetAt, e.offset, e.offsetSeen = mono, off, true
	if !seen {
		return true
	}
	drift := off - prevOff
	return max(drift, -drift) <= stepSlack+max(mono-prevMono, 0)/2000
}
