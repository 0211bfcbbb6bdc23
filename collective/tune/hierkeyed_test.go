package tune

import (
	"testing"
	"time"
)

// TestHierKeyedAgainstSim: the hierarchical AllReduce's pieces run at
// once, each level's messages in key order (hierKeyed): against gocoll
// sim's virtual times (payload-free at simHierScale, the sim's default
// links, 512 KiB chunks), the model is within 10 %. With the pieces
// pipelined one behind the other (the model before), 64 ranks on one site
// were 1.132 (16 MiB) and 1.112 (64 MiB) and 4 x 4 x 4 over a 5 ms WAN
// of 8 paths 1.204 at 16 MiB (its chain and 3 whole pieces: 44.5 ms);
// without the further pieces inside the WAN's latency chain (phase.hide)
// 4 x 4 x 4 was 0.757 and 0.883.
func TestHierKeyedAgainstSim(t *testing.T) {
	wan := DefaultLinks()
	wan.WAN.Latency, wan.WAN.Lanes = 5*time.Millisecond, 8
	for _, tc := range []struct {
		name                string
		sites, hosts, ranks int
		links               Links
		bytes               int
		sim                 time.Duration
	}{
		{"1x8x8 16M", 1, 8, 8, DefaultLinks(), 16 << 20, 28737 * time.Microsecond},
		{"1x8x8 64M", 1, 8, 8, DefaultLinks(), 64 << 20, 108582 * time.Microsecond},
		{"4x4x4 16M", 4, 4, 4, wan, 16 << 20, 53562 * time.Microsecond},
		{"4x4x4 64M", 4, 4, 4, wan, 64 << 20, 153998 * time.Microsecond},
		{"4x8x8 16M", 4, 8, 8, DefaultLinks(), 16 << 20, 266948 * time.Microsecond},
	} {
		in := Input{Topology: grid(t, tc.sites, tc.hosts, tc.ranks), Bytes: tc.bytes, ChunkBytes: 512 << 10, Links: tc.links, IdealTransport: true}
		if HierRamp(in) {
			t.Fatalf("%s: ramped; the case is the even pieces'", tc.name)
		}
		got := predicted(t, AllReduce, in, "hierarchical")
		if r := float64(tc.sim) / float64(got); r < 0.9 || r > 1.1 {
			t.Errorf("%s: sim %v / model %v = %.3f, want within 10 %%", tc.name, tc.sim, got, r)
		}
	}
}

// TestHierKeyedOneSiteTakesTheRing: on one site of 8 hosts of 8 ranks
// (the sim's default links) the ring AllReduce is faster than the
// hierarchical one from 16 MiB (gocoll sim: 26.5 against 28.7 ms at 16
// MiB, 211.4 against 217.1 at 128 MiB), so the model chooses it (before
// hierKeyed it chose the hierarchical: 1.08x the ring at 16 MiB).
func TestHierKeyedOneSiteTakesTheRing(t *testing.T) {
	for _, b := range []int{16 << 20, 128 << 20, 256 << 20} {
		in := Input{Topology: grid(t, 1, 8, 8), Bytes: b, ChunkBytes: 512 << 10, Links: DefaultLinks()}
		p, err := Choose(AllReduce, in)
		if err != nil {
			t.Fatal(err)
		}
		if p.Algorithm != "ring" {
			t.Errorf("%d MiB: chose %s, want ring", b>>20, p.Algorithm)
		}
	}
}

// predicted returns the model's time for algo.
func predicted(t *testing.T, coll Collective, in Input, algo string) time.Duration {
	t.Helper()
	ps, err := Predict(coll, in)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Algorithm == algo {
			return p.Time
		}
	}
	t.Fatalf("no %s among %v", algo, ps)
	return 0
}
