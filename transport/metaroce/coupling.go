package metaroce

import "time"

// freeShare is how many of a connection's paths share the additive step
// of a small window (under coupleBelow packets, see window.onAck) on a
// path that took no congestion signal lately (path.congested): such a
// path grows by freeShare/paths packets per window instead of 1/paths,
// so that a connection of 8 paths grows as 4 flows until one of its
// paths sees an ECN mark or a loss it takes for congestion, and as one
// flow for floorWindow after that on that path.
//
// The step shared among all paths keeps an incast's buffer from
// overflowing (6 connections of 8 paths, each under a packet of the
// bandwidth-delay product), but where the paths' windows are at a few
// packets with a deep buffer and the delay signal keeps the queue
// (issue 14's WAN: 4 connections of 8 paths over 4 links of 200 Mbit/s,
// 2 ms), the connections' shares even out and a connection left alone
// fills the links only at one packet per round trip: the connection that
// finishes last in a collective's phase then carries its tail at a
// quarter of the links for tens of ms (bench/results/wan_gap.md,
// session 24). An incast's paths take their losses early and are coupled
// from then on; a path that never overflowed its buffer grows faster.
const freeShare = 4

// congested reports whether the path took an ECN mark or a loss for
// congestion (path.lossCut) within the last floorWindow before now.
func (p *path) congested(now time.Duration) bool {
	return p.congestedAt != 0 && now-p.congestedAt < floorWindow
}
