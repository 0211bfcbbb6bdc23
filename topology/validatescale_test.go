package topology

import (
	"fmt"
	"strings"
	"testing"
)

// Validate parses each distinct cpu list once, not each rank's: at 65536
// ranks sharing "0-255" (256 hosts of 256 ranks) it took 1.36 s against
// 0.15 s without cpu lists (load ~21, review B15).
func BenchmarkValidateCPUs65536(b *testing.B) {
	tp := cpuGrid(b, 256, 256, "0-255")
	for b.Loop() {
		if err := tp.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

func cpuGrid(tb testing.TB, hosts, perHost int, cpus string) Topology {
	var rs []RankInfo
	for h := range hosts {
		for l := range perHost {
			rs = append(rs, RankInfo{Rank: len(rs), Host: fmt.Sprintf("h%d", h), Site: "s", LocalRank: l,
				CPU: CPUInfo{Machine: fmt.Sprintf("m%d", h), Cores: 256, CPUs: cpus}})
		}
	}
	tp, err := New(rs)
	if err != nil {
		tb.Fatal(err)
	}
	return tp
}

// A list shared by several ranks is still checked against each rank's
// cores, and a bad list on one rank still names that rank.
func TestValidateSharedCPUList(t *testing.T) {
	tp := cpuGrid(t, 2, 3, "0-255")
	tp.Ranks[4].CPU.Cores = 2
	if err := tp.Validate(); err == nil || err.Error() != `topology: invalid: ranks[4] (rank 4): cpu: cpus "0-255" lists 256 CPUs but cores is 2` {
		t.Errorf("rank 4's cores 2 with a shared list of 256: %v", err)
	}
	tp.Ranks[4].CPU.Cores = 256
	tp.Ranks[5].CPU.CPUs = "3-1"
	if err := tp.Validate(); err == nil || !strings.Contains(err.Error(), "ranks[5] (rank 5): cpu: cpus:") {
		t.Errorf("rank 5's bad list: %v", err)
	}
}
