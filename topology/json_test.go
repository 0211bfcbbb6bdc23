package topology

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// richTopology is a two-host topology with NICs and CPU details filled in.
func richTopology() Topology {
	cpu := CPUInfo{
		Arch: "amd64", Vendor: "AMD", Brand: "AMD EPYC 9654 96-Core Processor",
		PhysicalCores: 96, LogicalCores: 192, ThreadsPerCore: 2, CacheLineBytes: 64,
		L1DBytes: 32 << 10, L2Bytes: 1 << 20, L3Bytes: 32 << 20, Machine: "9f2c41d07a3e55b1", Cores: 192,
		Features: CPUFeatures{SSE2: true, SSE41: true, SSE42: true, AVX: true, AVX2: true, FMA3: true,
			F16C: true, AVX512F: true, AVX512BW: true, AVX512VL: true, AVX512BF16: true},
	}
	nics := []NIC{
		{Name: "lo", MTU: 65536, Addrs: []string{"127.0.0.1/8", "::1/128"}, Up: true, Running: true, Loopback: true},
		{Name: "eth0", MTU: 9000, Addrs: []string{"10.1.0.7/16"}, Up: true, Running: true},
	}
	return Topology{Ranks: []RankInfo{
		{Rank: 1, Host: "gpu-b1", Site: "east", Addr: "10.2.0.9:4000", NICs: nics},
		{Rank: 0, Host: "gpu-a1", Site: "west", Addr: "10.1.0.7:4000", NICs: nics, CPU: cpu},
		{Rank: 2, Host: "gpu-b1", Site: "east", LocalRank: 1, Addr: "10.2.0.9:4001", CPU: CPUInfo{Arch: "arm64",
			Features: CPUFeatures{ASIMD: true, ASIMDHP: true, ASIMDDP: true, BF16: true, SVE: true}}},
	}}
}

func TestMarshalParseRoundTrip(t *testing.T) {
	cases := []Topology{richTopology()}
	for _, c := range propertyCases(50) {
		cases = append(cases, c.topo)
	}
	for _, topo := range cases {
		data, err := Marshal(topo)
		require.NoError(t, err)
		got, err := Parse(data)
		require.NoError(t, err)
		want, err := New(topo.Ranks)
		require.NoError(t, err)
		require.Equal(t, want, got)

		again, err := Marshal(got)
		require.NoError(t, err)
		require.Equal(t, string(data), string(again), "Marshal must depend only on the topology")
	}
}

func TestMarshalFormat(t *testing.T) {
	topo := Topology{Ranks: []RankInfo{
		{Rank: 1, Host: "h", LocalRank: 1},
		{Rank: 0, Host: "h", NICs: []NIC{{Name: "eth0", MTU: 1500, Addrs: []string{"10.0.0.1/24"}, Up: true}},
			CPU: CPUInfo{Arch: "amd64", Features: CPUFeatures{AVX2: true}}},
	}}
	data, err := Marshal(topo)
	require.NoError(t, err)
	require.Equal(t, `{
  "version": 1,
  "ranks": [
    {
      "rank": 0,
      "host": "h",
      "site": "default",
      "local_rank": 0,
      "nics": [
        {
          "name": "eth0",
          "mtu": 1500,
          "addrs": [
            "10.0.0.1/24"
          ],
          "up": true
        }
      ],
      "cpu": {
        "arch": "amd64",
        "features": {
          "avx2": true
        }
      }
    },
    {
      "rank": 1,
      "host": "h",
      "site": "default",
      "local_rank": 1
    }
  ]
}
`, string(data))

	// encoding/json on a RankInfo uses the same keys as the file.
	direct, err := json.Marshal(topo.Ranks[0])
	require.NoError(t, err)
	require.JSONEq(t, `{"rank":1,"host":"h","local_rank":1}`, string(direct))

	_, err = Marshal(Topology{Ranks: []RankInfo{{Rank: 3, Host: "h"}}})
	require.ErrorIs(t, err, ErrInvalid)
}

func TestParseRejects(t *testing.T) {
	const rank0 = `{"rank":0,"host":"h","local_rank":0}`
	cases := []struct {
		name, in, errSub string
	}{
		{"empty", ``, "file: empty"},
		{"not an object", `[]`, "the file is a JSON array, want an object"},
		{"truncated", `{"version":1,"ranks":[` + rank0, "truncated"},
		{"syntax", `{"version":1,,}`, "offset 14: invalid character ','"},
		{"trailing data", `{"version":1,"ranks":[` + rank0 + `]} {}`, "data after the topology object"},
		{"invalid utf8", "{\"version\":1,\"ranks\":[{\"rank\":0,\"host\":\"\xff\",\"local_rank\":0}]}", "not valid UTF-8"},
		{"missing version", `{"ranks":[` + rank0 + `]}`, `missing "version"`},
		{"future version", `{"version":3,"ranks":[` + rank0 + `]}`, "version 3, want 1 or 2"},
		{"no ranks", `{"version":1,"ranks":[]}`, "no ranks"},
		{"null ranks", `{"version":1,"ranks":null}`, "no ranks"},
		{"unknown key", `{"version":1,"ranks":[` + rank0 + `],"extra":1}`, `unknown key "extra"`},
		{"wrong case", `{"version":1,"ranks":[{"rank":0,"Host":"h","local_rank":0}]}`, `unknown key "Host" (keys are case-sensitive)`},
		{"key of another object", `{"version":1,"ranks":[{"rank":0,"host":"h","local_rank":0,"mtu":5}]}`, `unknown field "mtu"`},
		{"duplicate key", `{"version":1,"ranks":[{"rank":0,"host":"h","host":"g","local_rank":0}]}`, `key "host" repeated`},
		{"duplicate top key", `{"version":1,"version":1,"ranks":[` + rank0 + `]}`, `key "version" repeated`},
		{"missing rank", `{"version":1,"ranks":[{"host":"h","local_rank":0}]}`, `ranks[0]: missing "rank"`},
		{"missing local rank", `{"version":1,"ranks":[{"rank":0,"host":"h"}]}`, `ranks[0] (rank 0): missing "local_rank"`},
		{"string rank", `{"version":1,"ranks":[{"rank":"0","host":"h","local_rank":0}]}`, `"ranks.rank" is a JSON string, want an integer`},
		{"fractional rank", `{"version":1,"ranks":[{"rank":0.5,"host":"h","local_rank":0}]}`, "ranks.rank"},
		{"huge rank", `{"version":1,"ranks":[{"rank":1e99,"host":"h","local_rank":0}]}`, "ranks.rank"},
		{"deep nesting", `{"version":1,"ranks":[` + strings.Repeat("[", 20) + strings.Repeat("]", 20) + `]}`, "nested deeper than 16"},
		{"deep known keys", strings.Repeat(`{"cpu":`, 20) + "1" + strings.Repeat("}", 20), "nested deeper than 16"},
		{"invalid topology", `{"version":1,"ranks":[{"rank":0,"host":"","local_rank":0}]}`, "ranks[0] (rank 0): empty host"},
		{"lone surrogate", `{"version":1,"ranks":[{"rank":0,"host":"\ud800","local_rank":0}]}`, "U+FFFD"},
		{"bad nic address", `{"version":1,"ranks":[{"rank":0,"host":"h","local_rank":0,"nics":[{"name":"e","addrs":["x"]}]}]}`,
			"not a CIDR prefix"},
		{"unknown cpu feature", `{"version":1,"ranks":[{"rank":0,"host":"h","local_rank":0,"cpu":{"features":{"avx9":true}}}]}`,
			`unknown key "avx9"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.in))
			require.ErrorIs(t, err, ErrInvalid)
			require.ErrorContains(t, err, c.errSub)
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "topo.json")
	data, err := Marshal(richTopology())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))
	got, err := Load(path)
	require.NoError(t, err)
	want, err := New(richTopology().Ranks)
	require.NoError(t, err)
	require.Equal(t, want, got)

	_, err = Load(filepath.Join(dir, "missing.json"))
	require.ErrorIs(t, err, os.ErrNotExist)

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"version":1}`), 0o600))
	_, err = Load(bad)
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorContains(t, err, "bad.json: topology: invalid: no ranks")
}

// FuzzParse checks that Parse never panics, that everything it accepts is
// valid, and that Marshal of an accepted topology parses back to it.
func FuzzParse(f *testing.F) {
	rich, err := Marshal(richTopology())
	require.NoError(f, err)
	f.Add(rich)
	for _, c := range propertyCases(5) {
		data, err := Marshal(c.topo)
		require.NoError(f, err)
		f.Add(data)
	}
	f.Add([]byte(`{"version":1,"ranks":[{"rank":0,"host":"h","local_rank":0}]}`))
	f.Add([]byte(`{"version":1,"ranks":[{"rank":1,"host":"h","local_rank":0},{"rank":0,"host":"g","site":"s","local_rank":0}]}`))
	f.Add([]byte(`{"version":1,"ranks":[{"rank":0,"host":"h","host":"g","local_rank":0}]}`))
	f.Add([]byte(`{"version":2,"ranks":[{"rank":0,"host":"h","local_rank":0},{"rank":1,"host":"g","local_rank":0}],` +
		`"levels":{"wan":{"latency":"5ms","bandwidth":1e8,"lanes":4}},"links":[{"hosts":["h","g"],"latency":"1us","bandwidth":3.5e9}]}`))
	f.Add([]byte(`{"version":2,"ranks":[{"rank":0,"host":"h","local_rank":0,"cpu":{"machine":"m1","cores":2}},{"rank":1,"host":"g","local_rank":0,"cpu":{"machine":"m1","cores":2}}],` +
		`"levels":{"site":{"latency":"50us","bandwidth":1e9,"cpu_per_byte":2e-9,"cpu_per_message":"30us"}}}`))
	f.Add([]byte(`{"version":2,"ranks":[{"rank":0,"host":"h","local_rank":0},{"rank":1,"host":"g","local_rank":0}],` +
		`"levels":{"host":{"latency":"3us","bandwidth":4e9,"cpu_per_byte_busy":7e-10,"latency_busy":"98us","latency_cold":"61us"}}}`))
	f.Add([]byte(`{"version":2,"ranks":[{"rank":0,"host":"h","local_rank":0},{"rank":1,"host":"g","local_rank":0}],` +
		`"levels":{"wan":{"latency":"2ms","bandwidth":1e8}},"reduce_per_byte":1.5e-10}`))
	f.Add([]byte(`{"version":2,"ranks":[{"rank":0,"host":"h","local_rank":0}],"reduce_per_byte":2e-10}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		topo, err := Parse(data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			return
		}
		if err := topo.Validate(); err != nil {
			t.Fatalf("Parse accepted an invalid topology: %v", err)
		}
		out, err := Marshal(topo)
		if err != nil {
			t.Fatalf("Marshal of a parsed topology: %v", err)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse of Marshal output: %v\n%s", err, out)
		}
		require.Equal(t, topo, again)
	})
}

// A seeded random corruption pass over valid files: single-byte edits must
// be rejected cleanly or parse to a valid topology, never panic.
func TestParseCorruptions(t *testing.T) {
	data, err := Marshal(richTopology())
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(9, 10))
	for range 2000 {
		mutated := []byte(string(data))
		i := rng.IntN(len(mutated))
		mutated[i] = byte(rng.IntN(256))
		topo, err := Parse(mutated)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalid)
			continue
		}
		require.NoError(t, topo.Validate())
	}
}

// A file whose ranks give their machine, cores or cpus is version 2: a
// version-1 reader (before those keys, strict about keys) refuses them,
// and Marshal promises version 1 only to files it can read (review B14
// L1). Without them, and without links, the file stays version 1.
func TestMarshalVersionOfCPUKeys(t *testing.T) {
	base := []RankInfo{{Rank: 0, Host: "h", LocalRank: 0}}
	for _, c := range []struct {
		name    string
		cpu     CPUInfo
		version string
	}{
		{"none", CPUInfo{Arch: "amd64"}, `"version": 1`},
		{"machine", CPUInfo{Machine: "m1"}, `"version": 2`},
		{"cores", CPUInfo{Cores: 4}, `"version": 2`},
		{"cpus", CPUInfo{Cores: 2, CPUs: "0-1"}, `"version": 2`},
	} {
		ranks := slices.Clone(base)
		ranks[0].CPU = c.cpu
		topo, err := New(ranks)
		require.NoError(t, err, c.name)
		out, err := Marshal(topo)
		require.NoError(t, err, c.name)
		require.Contains(t, string(out), c.version, c.name)
		back, err := Parse(out)
		require.NoError(t, err, c.name)
		require.Equal(t, c.cpu, back.Ranks[0].CPU, c.name)
	}
}
