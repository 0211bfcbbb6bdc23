package probe_test

import (
	"testing"
	"time"
)

// TestMeasureBandwidthNotAboveTheLink: a link of base round trip 2 ms
// whose trips are late by 6 ms more often than not (round trips 2, 8, 8,
// 2, 8 ms, as in TestMeasureMedianLatency), and 4 MiB bulk transfers that
// take 46 ms on the wire plus a round trip: 48 ms when on time, 54 ms when
// late. The link carries 4 MiB / 46 ms = 91.2 MB/s. The fastest bulk
// (48 ms) less the median round trip (8 ms) would say 4 MiB / 40 ms =
// 104.9 MB/s, 15 % above the link (review B16 F4); less the fastest trip
// (2 ms) it is the link's.
func TestMeasureBandwidthNotAboveTheLink(t *testing.T) {
	ms := time.Millisecond
	steps := []time.Duration{0, 0, 2 * ms, 0, 8 * ms, 0, 8 * ms, 0, 2 * ms, 0, 0, 8 * ms, 0, 54 * ms, 0, 48 * ms, 0, 54 * ms}
	got := measureScripted(t, steps)
	if got[0].WAN == nil {
		t.Fatal("no WAN figures")
	}
	link := float64(4<<20) / 0.046
	t.Logf("WAN latency %v, bandwidth %.4g B/s; the link carries %.4g B/s (%.1f %% above)", got[0].WAN.Latency, got[0].WAN.Bandwidth, link, 100*(got[0].WAN.Bandwidth/link-1))
	if got[0].WAN.Bandwidth > 1.01*link {
		t.Errorf("the probe's bandwidth %.4g B/s is above the link's %.4g: the fastest transfer less the median round trip", got[0].WAN.Bandwidth, link)
	}
}
