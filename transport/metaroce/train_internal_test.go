package metaroce

import (
	"testing"
	"time"
)

// TestTrainLen checks a train's bounds: rate x min(trainSpan, rtt/2) in
// datagrams, at most maxTrain and trainBytes, at least one, and one on a
// connection of RTT under longAckRTT.
func TestTrainLen(t *testing.T) {
	for _, c := range []struct {
		rate float64
		rtt  time.Duration
		size int
		want int
	}{
		{25e6, 4 * time.Millisecond, 9000, 2},       // the lab's WAN share: 1 ms of 25 MB/s
		{50e6, 4 * time.Millisecond, 9000, 5},       // 1 ms of 50 MB/s
		{50e6, time.Millisecond, 9000, 2},           // half the RTT: 500 µs
		{1e9, 4 * time.Millisecond, 9000, 7},        // 64 KiB of 9000-byte datagrams
		{1e9, 4 * time.Millisecond, 1452, maxTrain}, // maxTrain
		{1e6, 4 * time.Millisecond, 9000, 1},        // a slow rate: one
		{1e9, 500 * time.Microsecond, 9000, 1},      // a datacenter's RTT: one
		{1e9, 4 * time.Millisecond, 65000, 1},       // a datagram above trainBytes/2
	} {
		if got := trainLen(c.rate, c.rtt, c.size); got != c.want {
			t.Errorf("trainLen(%g, %v, %d) = %d, want %d", c.rate, c.rtt, c.size, got, c.want)
		}
	}
}
