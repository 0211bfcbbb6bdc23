package metaroce

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPaceRTTTakesALowerLatest: a path whose round trip fell (a queue it
// shared drained) is paced over its latest sample at once, where the
// smoothed RTT still stands near the queue's; a sample above the smoothed
// RTT leaves the pacing to the smoothed one. The connection's rate is the
// window over that round trip times the gain.
func TestPaceRTTTakesALowerLatest(t *testing.T) {
	cfg, err := Config{}.withDefaults()
	require.NoError(t, err)
	const ms = time.Millisecond
	p := newPath(0, 1, &cfg, 9000)
	require.Equal(t, p.rtt.srtt, p.paceRTT(), "no sample yet: the seed")
	now := time.Duration(0)
	for range 20 {
		now += 12 * ms
		p.rtt.sample(12*ms, now)
	}
	require.Equal(t, 12*ms, p.paceRTT())

	now += 4 * ms
	p.rtt.sample(4*ms, now)
	require.Greater(t, p.rtt.srtt, 10*ms, "the smoothed RTT follows one sample by an eighth")
	require.Equal(t, 4*ms, p.paceRTT(), "the queue drained: paced over the latest sample")

	now += 20 * ms
	p.rtt.sample(20*ms, now)
	require.Equal(t, p.rtt.srtt, p.paceRTT(), "a rise is left to the smoothed RTT")

	p.win.cwnd, p.win.ssthresh = 90_000, 9000 // congestion avoidance: gain paceGainAvoidance
	now += 4 * ms
	p.rtt.sample(4*ms, now)
	c := &conn{paths: []*path{p}}
	rate, peer := c.paceRate()
	require.False(t, peer)
	require.InDelta(t, paceGainAvoidance*90_000/(4*ms).Seconds(), rate, 1)
}
