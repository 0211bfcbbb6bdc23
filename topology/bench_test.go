package topology

import "testing"

// benchTopology has 4 sites of 64 hosts of 8 ranks (2048 ranks), numbered
// round robin across sites.
func benchTopology() Topology {
	spec := make(layoutSpec, 4)
	for s := range spec {
		spec[s] = make([]int, 64)
		for h := range spec[s] {
			spec[s][h] = 8
		}
	}
	return buildTopology(spec, interleaved(spec), nil)
}

func BenchmarkRingOrder(b *testing.B) {
	topo := benchTopology()
	for b.Loop() {
		if _, err := RingOrder(topo); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHierarchicalTree(b *testing.B) {
	topo := benchTopology()
	for b.Loop() {
		if _, err := HierarchicalTree(topo); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	data, err := Marshal(benchTopology())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}
