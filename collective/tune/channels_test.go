package tune

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// The ring AllReduce's prediction chooses its channels where Input.Channels
// is 0: on 2 x 2 x 2 with 4 WAN lanes, 2 (strides 1 and 7: each site's two
// crossings on separate lanes), predicted about half one channel's time;
// with one lane 1 (the lanes are shared, more rings buy nothing); asked
// for 3, 3. Out-of-range counts are refused naming the field.
func TestRingChannels(t *testing.T) {
	pred := func(lanes, channels int) Prediction {
		ls := DefaultLinks()
		ls.WAN.Lanes = lanes
		return predictionOf(t, "ring", Input{Topology: grid(t, 2, 2, 2), Bytes: 64 << 20, ChunkBytes: 512 << 10, Links: ls, Channels: channels})
	}
	auto, one := pred(4, 0), pred(4, 1)
	t.Logf("4 lanes: auto %d channels %v, 1 channel %v", auto.Channels, auto.Time, one.Time)
	if auto.Channels != 2 || one.Channels != 1 {
		t.Errorf("4 lanes: channels %d (auto) and %d (asked 1), want 2 and 1", auto.Channels, one.Channels)
	}
	if r := float64(auto.Time) / float64(one.Time); r < 0.45 || r > 0.55 {
		t.Errorf("4 lanes: 2 channels %v, %.2f of one's %v, want about half (gocoll sim: 591 ms / 1.178 s)", auto.Time, r, one.Time)
	}
	if p := pred(1, 0); p.Channels != 1 {
		t.Errorf("1 lane: %d channels (%v), want 1", p.Channels, p.Time)
	}
	if p := pred(1, 3); p.Channels != 3 {
		t.Errorf("asked 3: %d channels", p.Channels)
	}
	for _, c := range []int{-1, ChannelsMax + 1} {
		_, err := Predict(AllReduce, Input{Topology: grid(t, 2, 2, 2), Bytes: 8, ChunkBytes: 1 << 19, Links: DefaultLinks(), Channels: c})
		if !errors.Is(err, ErrInvalid) || err == nil || !strings.Contains(err.Error(), "Channels") {
			t.Errorf("Channels %d: %v, want an error naming Channels", c, err)
		}
	}
}

// Rings driven in lockstep may cross a slow link at every step: on 4 x 32
// x 8 ranks whose 5 ms WAN has 8 lanes, 2 channels (strides 1 and 1023)
// cross each site's edge one way then back at every one of their 2046
// steps, so 64 MiB is predicted above 10 s (gocoll sim: 4 channels 8.458 s,
// where the model said 340 ms before it knew), and auto keeps 1 channel.
func TestLockstepLatency(t *testing.T) {
	ls := DefaultLinks()
	ls.WAN.Latency, ls.WAN.Lanes = 5*time.Millisecond, 8
	ring := func(c int) Prediction {
		ps, err := Predict(AllReduce, Input{Topology: grid(t, 4, 32, 8), Bytes: 64 << 20, ChunkBytes: 512 << 10, Links: ls, Channels: c})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if p.Algorithm == "ring" {
				return p
			}
		}
		t.Fatal("no ring")
		return Prediction{}
	}
	if p := ring(2); p.Time < 2046*5*time.Millisecond {
		t.Errorf("2 channels: %v, want at least 2046 WAN latencies (10.23 s)", p.Time)
	}
	if p := ring(0); p.Channels != 1 {
		t.Errorf("auto: %d channels (%v), want 1", p.Channels, p.Time)
	}
}

// The trees' prediction chooses their channels too: on 4 x 8 x 8 at
// 256 MiB, more than one pair of trees (each tree edge waits a latency per
// chunk, which other channels' edges fill; gocoll sim: 8.08 s on one
// channel, 6.74 s on two), fewer than asked where a tree's part would be
// under a chunk, and as asked otherwise.
func TestTreeChannels(t *testing.T) {
	pred := func(bytes, channels int) Prediction {
		return predictionOf(t, "tree", Input{Topology: grid(t, 4, 8, 8), Bytes: bytes, ChunkBytes: 512 << 10, Links: DefaultLinks(), Channels: channels})
	}
	auto, one := pred(256<<20, 0), pred(256<<20, 1)
	if auto.Channels < 2 || auto.Time >= one.Time {
		t.Errorf("256 MiB: auto %d channels %v, 1 channel %v: want more channels, faster", auto.Channels, auto.Time, one.Time)
	}
	if p := pred(256<<20, 3); p.Channels != 3 {
		t.Errorf("asked 3: %d channels", p.Channels)
	}
	if p := pred(1<<20, 3); p.Channels != 1 { // 1 MiB: two trees of one chunk each
		t.Errorf("1 MiB, asked 3: %d channels, want 1", p.Channels)
	}
	if got := TreeChannels(16, 8, 512<<10); got != 1 {
		t.Errorf("TreeChannels(16, 8 B): %d, want 1", got)
	}
}

// predictionOf returns the AllReduce prediction of algo on in.
func predictionOf(t *testing.T, algo string, in Input) Prediction {
	t.Helper()
	ps, err := Predict(AllReduce, in)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Algorithm == algo {
			return p
		}
	}
	t.Fatalf("no %s prediction", algo)
	return Prediction{}
}
