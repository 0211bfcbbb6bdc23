package topology

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const twoHosts = `"ranks": [{"rank": 0, "host": "a", "site": "east", "local_rank": 0},
	{"rank": 1, "host": "b", "site": "west", "local_rank": 0}]`

// A version 2 file's levels and links load, and Marshal writes them back
// to the same topology.
func TestLinksRoundTrip(t *testing.T) {
	data := `{"version": 2, ` + twoHosts + `,
	"levels": {"wan": {"latency": "5ms", "bandwidth": 1.25e8, "lanes": 8, "cpu_per_byte": 3.5e-10, "cpu_per_byte_busy": 7e-10, "cpu_per_message": "40us", "latency_busy": "5.2ms", "latency_cold": "5.09ms"},
		"host": {"latency": "2us", "bandwidth": 4e9}},
	"links": [{"hosts": ["a", "b"], "latency": "7ms", "bandwidth": 5e7}]}`
	topo, err := Parse([]byte(data))
	require.NoError(t, err)
	require.NotNil(t, topo.Links)
	require.Equal(t, &Link{Latency: 5 * time.Millisecond, Bandwidth: 1.25e8, Lanes: 8,
		CPUPerByte: 3.5e-10, CPUPerByteBusy: 7e-10, CPUPerMessage: 40 * time.Microsecond, LatencyBusy: 5200 * time.Microsecond, LatencyCold: 5090 * time.Microsecond}, topo.Links.WAN)
	// A level without "latency_cold" (every file before it) loads with none.
	require.Equal(t, &Link{Latency: 2 * time.Microsecond, Bandwidth: 4e9}, topo.Links.Host)
	require.Nil(t, topo.Links.Site)
	l, ok := topo.Pair("b", "a")
	require.True(t, ok)
	require.Equal(t, Link{Latency: 7 * time.Millisecond, Bandwidth: 5e7}, l)

	out, err := Marshal(topo)
	require.NoError(t, err)
	require.Contains(t, string(out), `"version": 2`)
	require.Contains(t, string(out), `"cpu_per_message": "40µs"`)
	require.Contains(t, string(out), `"latency_busy": "5.2ms"`)
	require.Contains(t, string(out), `"latency_cold": "5.09ms"`)
	require.Equal(t, 1, strings.Count(string(out), "latency_cold"), "written only where known")
	again, err := Parse(out)
	require.NoError(t, err)
	require.Equal(t, topo, again)

	// The reduction's CPU, alone or beside the levels, goes both ways, and
	// makes the file version 2.
	for _, ls := range []*Links{{ReducePerByte: 1.5e-10}, {ReducePerByte: 2e-10, WAN: topo.Links.WAN}} {
		with := topo
		with.Links = ls
		out, err := Marshal(with)
		require.NoError(t, err)
		require.Contains(t, string(out), `"version": 2`)
		require.Contains(t, string(out), `"reduce_per_byte": `)
		again, err := Parse(out)
		require.NoError(t, err)
		require.Equal(t, with, again)
		require.Equal(t, ls.ReducePerByte, again.Links.Clone().ReducePerByte)
	}

	// Without links, Marshal still writes version 1.
	topo.Links = nil
	out, err = Marshal(topo)
	require.NoError(t, err)
	require.Contains(t, string(out), `"version": 1`)
}

// Bad link figures are refused with an error naming the field.
func TestLinksRejects(t *testing.T) {
	cases := []struct {
		name, extra, want string
	}{
		{"negative bandwidth", `"levels": {"wan": {"latency": "5ms", "bandwidth": -1}}`, "levels.wan: bandwidth -1 is not a finite number of bytes per second >= 1"},
		{"zero bandwidth", `"links": [{"hosts": ["a", "b"], "latency": "1ms", "bandwidth": 0}]`, "links[0]: bandwidth 0"},
		{"unknown level", `"levels": {"rack": {"latency": "5ms", "bandwidth": 1}}`, `levels: unknown level "rack"`},
		{"level in wrong case", `"levels": {"WAN": {"latency": "5ms", "bandwidth": 1}}`, `levels: unknown level "WAN"`},
		{"unknown host", `"links": [{"hosts": ["a", "c"], "latency": "1ms", "bandwidth": 1e6}]`, `links[0]: host "c" is not a host of the topology`},
		{"link to itself", `"links": [{"hosts": ["a", "a"], "latency": "1ms", "bandwidth": 1e6}]`, `links[0]: joins host "a" to itself`},
		{"one host", `"links": [{"hosts": ["a"], "latency": "1ms", "bandwidth": 1e6}]`, `links[0]: "hosts" has 1 names, want 2`},
		{"repeated pair", `"links": [{"hosts": ["a", "b"], "latency": "1ms", "bandwidth": 1e6}, {"hosts": ["b", "a"], "latency": "1ms", "bandwidth": 1e6}]`,
			`links[1]: hosts "b" and "a" already joined by links[0]`},
		{"negative latency", `"levels": {"site": {"latency": "-1ms", "bandwidth": 1}}`, "levels.site: latency -1ms is not in [0, 1h0m0s]"},
		{"latency over an hour", `"levels": {"wan": {"latency": "1000000h", "bandwidth": 1}}`, "levels.wan: latency 1000000h0m0s is not in [0, 1h0m0s]"},
		{"bandwidth under a byte a second", `"levels": {"wan": {"latency": "5ms", "bandwidth": 1e-300}}`, "levels.wan: bandwidth 1e-300 is not a finite number of bytes per second >= 1"},
		{"bandwidth under a byte a second in a pair", `"links": [{"hosts": ["a", "b"], "latency": "1ms", "bandwidth": 0.5}]`, "links[0]: bandwidth 0.5"},
		{"busy CPU per byte too large", `"levels": {"wan": {"latency": "5ms", "bandwidth": 1, "cpu_per_byte_busy": 0.5}}`, "levels.wan: cpu_per_byte_busy 0.5 is not in"},
		{"bad latency", `"levels": {"site": {"latency": "fast", "bandwidth": 1}}`, `levels.site: latency "fast" is not a duration`},
		{"latency as a number", `"levels": {"site": {"latency": 5, "bandwidth": 1}}`, `"levels.LEVEL.latency" is a JSON number, want a string`},
		{"bandwidth out of float64", `"levels": {"wan": {"latency": "5ms", "bandwidth": 1e309}}`, `"levels.LEVEL.bandwidth" is a JSON number 1e309`},
		{"bandwidth as a string in a pair", `"links": [{"hosts": ["a", "b"], "latency": "1ms", "bandwidth": "x"}]`, `"links.bandwidth" is a JSON string`},
		{"missing bandwidth", `"levels": {"site": {"latency": "1ms"}}`, `levels.site: missing "bandwidth"`},
		{"negative lanes", `"levels": {"wan": {"latency": "1ms", "bandwidth": 1, "lanes": -1}}`, "levels.wan: lanes -1 is negative"},
		{"negative CPU per byte", `"levels": {"wan": {"latency": "1ms", "bandwidth": 1, "cpu_per_byte": -1e-9}}`, "levels.wan: cpu_per_byte -1e-09 is not in"},
		{"busy CPU per byte negative", `"levels": {"wan": {"latency": "1ms", "bandwidth": 1, "cpu_per_byte_busy": -1e-9}}`, "levels.wan: cpu_per_byte_busy -1e-09 is not in"},
		{"CPU per byte too large", `"links": [{"hosts": ["a", "b"], "latency": "1ms", "bandwidth": 1, "cpu_per_byte": 0.5}]`, "links[0]: cpu_per_byte 0.5 is not in"},
		{"bad CPU per message", `"levels": {"host": {"latency": "1us", "bandwidth": 1, "cpu_per_message": "slow"}}`, `levels.host: cpu_per_message "slow" is not a duration`},
		{"negative CPU per message", `"levels": {"host": {"latency": "1us", "bandwidth": 1, "cpu_per_message": "-2us"}}`, "levels.host: cpu_per_message -2µs is not in"},
		{"bad busy latency", `"levels": {"site": {"latency": "1us", "bandwidth": 1, "latency_busy": "soon"}}`, `levels.site: latency_busy "soon" is not a duration`},
		{"negative busy latency", `"levels": {"site": {"latency": "1us", "bandwidth": 1, "latency_busy": "-3us"}}`, "levels.site: latency_busy -3µs is not in"},
		{"bad cold latency", `"levels": {"host": {"latency": "1us", "bandwidth": 1, "latency_cold": "later"}}`, `levels.host: latency_cold "later" is not a duration`},
		{"negative cold latency", `"levels": {"wan": {"latency": "1ms", "bandwidth": 1, "latency_cold": "-80us"}}`, "levels.wan: latency_cold -80µs is not in"},
		{"negative cold latency in a pair", `"links": [{"hosts": ["a", "b"], "latency": "1ms", "bandwidth": 1, "latency_cold": "-1ms"}]`, "links[0]: latency_cold -1ms is not in"},
		{"cold latency as a number", `"levels": {"host": {"latency": "1us", "bandwidth": 1, "latency_cold": 5}}`, `"levels.LEVEL.latency_cold" is a JSON number, want a string`},
		{"CPU per byte as a string", `"levels": {"host": {"latency": "1us", "bandwidth": 1, "cpu_per_byte": "1ns"}}`, "is a JSON string, want"},
		{"negative reduction CPU", `"reduce_per_byte": -1e-10`, "reduce_per_byte: -1e-10 is not in [0, 1e-06] seconds"},
		{"reduction CPU too large", `"levels": {"wan": {"latency": "1ms", "bandwidth": 1}}, "reduce_per_byte": 0.5`, "reduce_per_byte: 0.5 is not in"},
		{"reduction CPU as a string", `"reduce_per_byte": "1ns"`, `"reduce_per_byte" is a JSON string, want`},
		{"reduction CPU in a level", `"levels": {"host": {"latency": "1us", "bandwidth": 1, "reduce_per_byte": 1e-10}}`, `unknown field "reduce_per_byte"`},
		{"unknown key in a link", `"links": [{"hosts": ["a", "b"], "latency": "1ms", "bandwidth": 1, "rate": 2}]`, `unknown key "rate"`},
	}
	for _, tc := range cases {
		_, err := Parse([]byte(`{"version": 2, ` + twoHosts + `, ` + tc.extra + `}`))
		require.ErrorIs(t, err, ErrInvalid, tc.name)
		require.Contains(t, err.Error(), tc.want, tc.name)
	}
	_, err := Parse([]byte(`{"version": 1, ` + twoHosts + `, "levels": {}}`))
	require.ErrorContains(t, err, `need version 2`)
	_, err = Parse([]byte(`{"version": 1, ` + twoHosts + `, "reduce_per_byte": 1e-10}`))
	require.ErrorContains(t, err, `need version 2`)

	// Validate refuses the same on a Topology built by hand.
	topo, err := Parse([]byte(`{"version": 1, ` + twoHosts + `}`))
	require.NoError(t, err)
	topo.Links = &Links{Pairs: []HostLink{{A: "a", B: "zz", Link: Link{Bandwidth: 1}}}}
	require.ErrorContains(t, topo.Validate(), `links[0]: host "zz"`)
	topo.Links = &Links{ReducePerByte: -1}
	require.ErrorContains(t, topo.Validate(), "reduce_per_byte: -1 is not in")
	topo.Links = &Links{WAN: &Link{Bandwidth: -5}}
	err = topo.Validate()
	require.ErrorIs(t, err, ErrInvalid)
	require.True(t, strings.Contains(err.Error(), "levels.wan: bandwidth -5"), err.Error())
}
