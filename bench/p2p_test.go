package bench

import (
	"bufio"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport"
)

func TestParseP2PArgs(t *testing.T) {
	o, err := ParseP2PArgs(nil)
	require.NoError(t, err)
	require.Equal(t, DefaultP2POptions(), o)
	require.Equal(t, 4, o.inFlight())

	o, err = ParseP2PArgs([]string{"--time", "3s", "--interval=250ms", "--size", "1M", "--window=8M", "--json",
		"--transport", "tcp", "--in-process=false", "--timeout", "5s"})
	require.NoError(t, err)
	require.Equal(t, P2POptions{Time: 3 * time.Second, Interval: 250 * time.Millisecond, MsgBytes: 1 << 20, Window: 8 << 20,
		Transport: "tcp", JSON: true, Timeout: 5 * time.Second}, o)
	require.Equal(t, 8, o.inFlight())

	for _, h := range [][]string{{"-h"}, {"--help"}, {"--time", "1s", "--help"}} {
		_, err := ParseP2PArgs(h)
		require.ErrorIs(t, err, ErrHelp, "%q", h)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"allreduce"}, `no argument "allreduce"`},
		{[]string{"--bogus"}, `unknown flag "--bogus"`},
		{[]string{"--time"}, "--time needs a value"},
		{[]string{"--time", "10"}, `"10" is not a duration`},
		{[]string{"--time", "0s"}, "--time 0s out of range"},
		{[]string{"--time", "25h"}, "--time 25h0m0s out of range"},
		{[]string{"--time", "1s", "--interval", "2s"}, "--interval 2s out of range"},
		{[]string{"--interval", "1ms"}, "--interval 1ms out of range"},
		{[]string{"--size", "4"}, "--size 4 out of range"},
		{[]string{"--size", "2G"}, "--size 2147483648 out of range"},
		{[]string{"--size", "4M", "--window", "6M"}, "must be a multiple of --size"},
		{[]string{"--size", "1K", "--window", "2M"}, "holds 2048 messages of --size 1024 (at most 1024)"},
		{[]string{"--size", "1G", "--window", "5G"}, "--window 5368709120 above 4294967296 bytes"},
		{[]string{"--size", "x"}, "flag --size"},
		{[]string{"--json=maybe"}, `"maybe" is not true or false`},
		{[]string{"--transport", "ib"}, `unknown transport "ib" (want metaroce, tcp, mptcp, shm or auto)`},
		{[]string{"--timeout", "-1s"}, "--timeout -1s must be positive"},
	} {
		_, err := ParseP2PArgs(c.args)
		require.ErrorContains(t, err, c.want, "%q", c.args)
		require.NotContains(t, err.Error(), "\n")
	}
}

func TestP2PUsageAndErrors(t *testing.T) {
	code, out, _ := runBench(t, "p2p", "-h")
	require.Equal(t, ExitOK, code)
	require.Contains(t, out, "usage: gocoll bench p2p")
	require.Contains(t, out, "--interval VALUE")
	code, _, errOut := runBench(t, "p2p", "--time", "x")
	require.Equal(t, ExitUsage, code)
	require.Equal(t, "gocoll bench: flag --time: \"x\" is not a duration such as 500ms or 10s\n", errOut)
	_, out, _ = runBench(t, "-h")
	require.Contains(t, out, "gocoll bench p2p")
}

// p2pDelta subtracts the earlier snapshot, path by path, and shares the
// interval's path bytes.
func TestP2PDelta(t *testing.T) {
	a := transport.PeerStats{Traffic: transport.Traffic{BytesSent: 1000}, Paths: []transport.PathStats{
		{Index: 0, BytesSent: 100, PacketsSent: 1, Retransmits: 1}, {Index: 1, BytesSent: 200, PacketsSent: 2, Timeouts: 2, SpuriousTimeouts: 1}}}
	b := transport.PeerStats{Traffic: transport.Traffic{BytesSent: 1000 + 125_000}, TargetRate: 1_000_000, Paths: []transport.PathStats{
		{Index: 0, State: "good", BytesSent: 100 + 30_000, PacketsSent: 21, Retransmits: 3, SRTT: 1500 * time.Microsecond, Window: 4096, WindowRate: 2_000_000},
		{Index: 1, State: "dead", BytesSent: 200 + 90_000, PacketsSent: 62, Lost: 4, Timeouts: 3, SpuriousTimeouts: 2}}}
	r := p2pDelta("interval", a, b, time.Second, 2*time.Second)
	want := p2pRow{Kind: "interval", Start: 1, End: 2, Bytes: 125_000, GoodputMbps: 1, TargetMbps: 8, PathBytes: 120_000, Retransmits: 2,
		Paths: []p2pPathRow{
			{Path: 0, State: "good", Bytes: 30_000, Share: 0.25, Packets: 20, Retransmits: 2, SRTTUs: 1500, Window: 4096, WindowRateMbps: 16},
			{Path: 1, State: "dead", Bytes: 90_000, Share: 0.75, Packets: 60, Lost: 4, Timeouts: 1, Spurious: 1}}}
	require.Equal(t, want, r)

	// A peer without paths (TCP, shm) and an empty interval.
	r = p2pDelta("total", transport.PeerStats{}, transport.PeerStats{}, 0, 0)
	require.Equal(t, p2pRow{Kind: "total"}, r)
}

// jsonKeys lists the keys of the JSON objects p2p prints, at the top and
// in each path.
var (
	p2pRowKeys  = []string{"bytes", "end_s", "goodput_mbps", "kind", "path_bytes", "paths", "retransmits", "start_s", "target_mbps"}
	p2pPathKeys = []string{"bytes", "lost", "packets", "path", "retransmits", "share", "spurious_timeouts", "srtt_us", "state", "timeouts", "window_bytes", "window_rate_mbps"}
)

// One second of MetaRoCE over loopback, in process: at least one
// interval, each with a row per path whose bytes add up to the
// interval's and whose shares add up to one; intervals that add up to the
// total; every line a JSON object of the documented keys.
func TestP2PInProcessJSON(t *testing.T) {
	code, out, errOut := runBench(t, "p2p", "--in-process", "--transport", "metaroce", "--time", "1s", "--interval", "250ms",
		"--size", "1M", "--window", "4M", "--json")
	require.Equal(t, ExitOK, code, errOut)
	var rows []p2pRow
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), sc.Text())
		require.Equal(t, p2pRowKeys, sortedKeys(m), sc.Text())
		var paths []map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(m["paths"], &paths))
		for _, p := range paths {
			require.Equal(t, p2pPathKeys, sortedKeys(p))
		}
		var r p2pRow
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		rows = append(rows, r)
	}
	require.GreaterOrEqual(t, len(rows), 2, out)
	intervals, total := rows[:len(rows)-1], rows[len(rows)-1]
	require.Equal(t, "total", total.Kind)
	var bytes, pathBytes int64
	for i, r := range intervals {
		require.Equal(t, "interval", r.Kind)
		require.NotEmpty(t, r.Paths, "interval %d", i)
		checkPathSums(t, r)
		if i > 0 {
			require.Equal(t, intervals[i-1].End, r.Start)
		}
		bytes += r.Bytes
		pathBytes += r.PathBytes
	}
	require.Positive(t, bytes)
	require.Equal(t, bytes, total.Bytes)
	require.Equal(t, pathBytes, total.PathBytes)
	require.GreaterOrEqual(t, total.PathBytes, total.Bytes-int64(4<<20), "the paths carried less than the messages completed")
	checkPathSums(t, total)
	require.InDelta(t, float64(total.Bytes)*8/1e6/total.End, total.GoodputMbps, 1e-6)
}

// checkPathSums checks that a row's path bytes and shares add up.
func checkPathSums(t *testing.T, r p2pRow) {
	t.Helper()
	var sum int64
	var share float64
	for _, p := range r.Paths {
		sum += p.Bytes
		share += p.Share
	}
	require.Equal(t, r.PathBytes, sum, "%+v", r)
	if sum > 0 {
		require.InDelta(t, 1, share, 1e-9, "%+v", r)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// The table, from two spawned ranks as gocoll run would start them over
// MetaRoCE: a header, an interval row and one row per path, and the total.
func TestP2PSpawnedTable(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 2 processes")
	}
	code, out, errOut := runBench(t, "p2p", "--time", "500ms", "--interval", "250ms", "--size", "1M", "--window", "4M")
	require.Equal(t, ExitOK, code, errOut)
	require.Contains(t, out, "# gocoll bench p2p: rank 0 -> rank 1 over metaroce, 2 processes (gocoll)")
	interval := regexp.MustCompile(`(?m)^ +\d+\.\d\d +\d+\.\d +\S+ +\d+\.\d +\d+$`)
	path := regexp.MustCompile(`(?m)^ +\d+  (good|skip|suspect|dead) +\d+\.\d +\d+\.\d% +\d+ +\d+ +\d+ +\d+\.\d +\S+$`)
	require.Len(t, interval.FindAllString(out, -1), 2, out)
	paths := len(path.FindAllString(out, -1))
	require.Positive(t, paths, out)
	require.Zero(t, paths%2, out)
	require.Regexp(t, `(?m)^# total: \d+\.\d MiB in 0\.\d\d s, goodput \d+\.\d Mbit/s; \d+\.\d MiB sent on \d+ paths, \d+ packets resent$`, out)
}

// The sampler makes one row per interval of --time, the last one shorter,
// however late its timer fires, and a total over them all.
func TestP2PSamplerRows(t *testing.T) {
	o := DefaultP2POptions()
	o.Time, o.Interval, o.JSON = 25*time.Millisecond, 10*time.Millisecond, true
	var buf strings.Builder
	var sent int64
	snap := func() transport.PeerStats {
		time.Sleep(15 * time.Millisecond) // later than the next tick
		sent += 1000
		return transport.PeerStats{Traffic: transport.Traffic{BytesSent: sent}}
	}
	s := &sampler{}
	require.NoError(t, s.run(t.Context(), snap, transport.PeerStats{}, time.Now(), o, newP2PReport(&buf, o, "test")))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 4, buf.String())
	var total p2pRow
	require.NoError(t, json.Unmarshal([]byte(lines[3]), &total))
	require.Equal(t, "total", total.Kind)
	require.Equal(t, int64(3000), total.Bytes)
	require.GreaterOrEqual(t, total.End, 0.045) // three late snapshots
}

// FuzzParseP2PArgs feeds command lines (arguments separated by NUL
// bytes): ParseP2PArgs never panics, its errors fit on one line, and what
// it accepts stays within the documented limits.
func FuzzParseP2PArgs(f *testing.F) {
	for _, s := range []string{"", "--time\x003s\x00--interval=250ms", "--size\x001M\x00--window\x008M\x00--json",
		"--transport\x00tcp\x00--in-process=false", "--window=1G\x00--size=1K", "-h", "--time=-1s", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		var args []string
		if line != "" {
			args = strings.Split(line, "\x00")
		}
		o, err := ParseP2PArgs(args)
		if err != nil {
			require.NotContains(t, err.Error(), "\n")
			return
		}
		require.Positive(t, o.Time)
		require.LessOrEqual(t, o.Time, P2PTimeMax)
		require.GreaterOrEqual(t, o.Interval, P2PIntervalMin)
		require.LessOrEqual(t, o.Interval, o.Time)
		require.GreaterOrEqual(t, o.MsgBytes, int64(P2PMsgMin))
		require.LessOrEqual(t, o.Window, int64(P2PWindowMaxLen))
		require.Zero(t, o.Window%o.MsgBytes)
		require.LessOrEqual(t, o.inFlight(), P2PInFlightMax)
		require.Positive(t, o.Timeout)
	})
}

// A transport without paths (TCP, shared memory) prints "-" for the
// paths' columns and no path rows.
func TestP2PTableWithoutPaths(t *testing.T) {
	o := DefaultP2POptions()
	o.Transport = "tcp"
	var buf strings.Builder
	rep := newP2PReport(&buf, o, "test")
	require.NoError(t, rep.begin())
	row := p2pDelta("interval", transport.PeerStats{}, transport.PeerStats{Traffic: transport.Traffic{BytesSent: 125_000_000}}, 0, time.Second)
	require.NoError(t, rep.row(row))
	row.Kind = "total"
	require.NoError(t, rep.end(row))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 6, buf.String())
	require.Equal(t, "# gocoll bench p2p: rank 0 -> rank 1 over tcp, test; 4M messages, 4 in flight; 10s, every 1s", lines[0])
	require.Equal(t, "     1.00           1000.0               -          -       -", lines[4])
	require.Equal(t, "# total: 119.2 MiB in 1.00 s, goodput 1000.0 Mbit/s", lines[5])
}
