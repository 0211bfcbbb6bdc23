package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"github.com/gocoll/gocoll/transport/shm"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
	"github.com/gocoll/gocoll/launcher"
)

// TestMain lets this test binary serve as the ranks Main spawns.
func TestMain(m *testing.M) {
	if js := os.Getenv(EnvArgs); js != "" {
		var args []string
		if err := json.Unmarshal([]byte(js), &args); err != nil {
			os.Exit(ExitUsage)
		}
		os.Exit(Main(context.Background(), args, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// runBench runs Main and returns its status and outputs.
func runBench(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(t.Context(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// quick are flags for a fast run at small sizes.
var quick = []string{"-b", "1", "-e", "4K", "-f", "8", "-n", "2", "-w", "1", "-c", "1"}

func withQuick(args ...string) []string { return append(append([]string{}, args...), quick...) }

// decodeRows parses --json output, one object per line.
func decodeRows(t *testing.T, out string) []jsonRow {
	t.Helper()
	var rows []jsonRow
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var r jsonRow
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&r), "line %q", sc.Text())
		rows = append(rows, r)
	}
	require.NotEmpty(t, rows)
	return rows
}

var (
	ncclRow = regexp.MustCompile(`^ +(\d+) +(\d+) +(\w+) +(\w+) +(-?\d+)` +
		`( +[\d.]+ +[\d.]+ +[\d.]+ +(\d+|N/A)| +N/A +N/A +N/A +N/A){2}$`)
	ncclColumns = regexp.MustCompile(`^# +size +count +type +redop +root +time +algbw +busbw +#wrong +time +algbw +busbw +#wrong$`)
	ncclUnits   = regexp.MustCompile(`^# +\(B\) +\(elements\) +\(us\) +\(GB/s\) +\(GB/s\) +\(us\) +\(GB/s\) +\(GB/s\)$`)
	ncclBounds  = regexp.MustCompile(`^# Out of bounds values : (\d+) (OK|FAILED)$`)
	ncclAvgBus  = regexp.MustCompile(`^# Avg bus bandwidth : [\d.e+-]+$`)
)

// TestTableFormat checks nccl-tests' layout line by line: headers, one row
// per size with both variants, and the footers.
func TestTableFormat(t *testing.T) {
	code, out, errOut := runBench(t, withQuick("allreduce", "--transport", "inproc", "-np", "3")...)
	require.Equal(t, ExitOK, code, errOut)
	require.Empty(t, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var rows, columns, units, bounds, avg int
	for _, l := range lines {
		switch {
		case ncclRow.MatchString(l):
			m := ncclRow.FindStringSubmatch(l)
			require.Equal(t, []string{"float32", "sum", "-1"}, m[3:6], l)
			require.NotContains(t, l, "N/A", "allreduce has both variants")
			rows++
		case ncclColumns.MatchString(l):
			columns++
		case ncclUnits.MatchString(l):
			units++
		case ncclBounds.MatchString(l):
			require.Equal(t, "# Out of bounds values : 0 OK", l)
			bounds++
		case ncclAvgBus.MatchString(l):
			avg++
		default:
			require.True(t, strings.HasPrefix(l, "#"), "unexpected line %q", l)
		}
	}
	require.Equal(t, 5, rows, out) // 1, 8, 64, 512 and 4096 bytes requested
	require.Equal(t, []int{1, 1, 1, 1}, []int{columns, units, bounds, avg}, out)
	require.Contains(t, out, "# Peak RSS : ")
}

// TestTableSizesAndCounts: the size and count columns follow nccl-tests,
// and a collective without an in-place form prints N/A there.
func TestTableSizesAndCounts(t *testing.T) {
	code, out, errOut := runBench(t, "allgather,alltoall", "--transport", "inproc", "-np", "4", "--sizes", "64,1K", "-n", "1")
	require.Equal(t, ExitOK, code, errOut)
	var got [][]string
	for _, l := range strings.Split(out, "\n") {
		if m := ncclRow.FindStringSubmatch(l); m != nil {
			got = append(got, m[1:6])
			require.Equal(t, strings.HasPrefix(l, " ") && strings.Contains(l, "N/A"), len(got) > 2, l)
		}
	}
	require.Equal(t, [][]string{
		{"64", "4", "float32", "none", "-1"}, {"1024", "64", "float32", "none", "-1"},
		{"64", "4", "float32", "none", "-1"}, {"1024", "64", "float32", "none", "-1"},
	}, got)
}

// TestEveryCollectiveChecks runs every collective with -c 1 over inproc on
// several world sizes: every value is right.
func TestEveryCollectiveChecks(t *testing.T) {
	for _, np := range []string{"1", "2", "3", "4", "5"} {
		code, out, errOut := runBench(t, withQuick("all", "--transport", "inproc", "-np", np, "-r", "0", "--json")...)
		require.Equal(t, ExitOK, code, "np=%s: %s", np, errOut)
		seen := map[string]int{}
		for _, r := range decodeRows(t, out) {
			seen[r.Coll]++
			require.NotNil(t, r.Wrong)
			require.Zero(t, *r.Wrong, "np=%s %s size %d", np, r.Coll, r.Size)
			if r.InPlace != nil {
				require.Zero(t, *r.InPlace.Wrong, "np=%s %s size %d in place", np, r.Coll, r.Size)
			}
		}
		require.Len(t, seen, int(numColls))
	}
}

// TestTypesAndOpsCheck covers every data type and op on the reducing
// collectives, a root other than 0, and the forced algorithms.
func TestTypesAndOpsCheck(t *testing.T) {
	types := []string{"float", "double", "bf16", "half", "int8", "uint8", "int32", "uint32", "int64", "uint64"}
	ops := []string{"sum", "prod", "min", "max", "avg"}
	for _, d := range types {
		for _, op := range ops {
			code, _, errOut := runBench(t, withQuick("allreduce,reduce,reducescatter", "--transport", "inproc",
				"-np", "3", "-r", "2", "-d", d, "-o", op, "--json")...)
			require.Equal(t, ExitOK, code, "%s %s: %s", d, op, errOut)
		}
	}
	for _, algo := range []string{"ring", "recursive-doubling"} {
		code, _, errOut := runBench(t, withQuick("allreduce", "--transport", "inproc", "-np", "5", "--algo", algo, "-e", "256K")...)
		require.Equal(t, ExitOK, code, "%s: %s", algo, errOut)
	}
	for _, algo := range []string{"chain", "binomial"} {
		code, _, errOut := runBench(t, withQuick("broadcast,reduce", "--transport", "inproc", "-np", "4", "-r", "1", "--algo", algo, "-e", "256K")...)
		require.Equal(t, ExitOK, code, "%s: %s", algo, errOut)
	}
}

// TestCorruptionIsCounted damages one element of one rank's output in every
// checked call: #wrong counts it, the footer says FAILED, the status is 1.
func TestCorruptionIsCounted(t *testing.T) {
	corruptHook = func(k collKind, rank int, recv []byte) {
		if rank == 1 && len(recv) > 0 {
			recv[0] ^= 0x40
		}
	}
	t.Cleanup(func() { corruptHook = nil })
	code, out, _ := runBench(t, "allreduce", "--transport", "inproc", "-np", "2", "--sizes", "64,4K", "-n", "1")
	require.Equal(t, ExitWrong, code, out)
	require.Contains(t, out, "# Out of bounds values : 4 FAILED")
	var wrongs []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); ncclRow.MatchString(l) {
			wrongs = append(wrongs, f[8], f[12])
		}
	}
	require.Equal(t, []string{"1", "1", "1", "1"}, wrongs)

	code, out, _ = runBench(t, "sendrecv", "--transport", "inproc", "-np", "2", "--sizes", "64", "-n", "1", "-c", "3", "--json")
	require.Equal(t, ExitWrong, code)
	rows := decodeRows(t, out)
	require.Equal(t, int64(3), *rows[0].Wrong)
	require.Nil(t, rows[0].InPlace)

	code, out, _ = runBench(t, "allreduce", "--transport", "inproc", "-np", "2", "--sizes", "64", "-n", "1", "-c", "0")
	require.Equal(t, ExitOK, code, "unchecked runs count nothing")
	require.Contains(t, out, "N/A")
}

// TestBadFlags: each bad command line is one line on stderr, nothing on
// stdout, and exit status 2.
func TestBadFlags(t *testing.T) {
	cases := [][]string{
		{"allreduce", "-b", "1Q"},
		{"allreduce", "-b", "1M", "-e", "1K"},
		{"allfoo"},
		{"allreduce", "-d", "float8"},
		{"allreduce", "-o", "xor"},
		{"allreduce", "-n", "0"},
		{"allreduce", "-w", "-1"},
		{"allreduce", "-f", "0"},
		{"allreduce", "-np", "0"},
		{"allreduce", "-np", "100000"},
		{"broadcast", "-np", "2", "-r", "2"},
		{"allreduce", "--algo", "chain"},
		{"allgather", "--algo", "fastest"},
		{"allreduce", "--transport", "carrier-pigeon"},
		{"allreduce", "--json", "--format", "peers"},
		{"allreduce", "--format", "csv"},
		{"allreduce", "-g", "1"},
		{"allreduce", "-b"},
		{"allreduce", "broadcast"},
		{},
		{"allreduce", "-b", "1", "-e", "1G", "-i", "1"},
		{"allreduce", "--sizes", "1K,8"},
		{"allreduce", "--timeout", "soon"},
		{"allreduce", "--label", "two words"},
		{"allreduce", "--json=maybe"},
		{"allreduce", "--timeout", "1e300"},
	}
	for _, args := range cases {
		code, out, errOut := runBench(t, append(args, "--transport=inproc")[:len(args)]...)
		require.Equal(t, ExitUsage, code, "%q: %s", args, errOut)
		require.Empty(t, out, "%q", args)
		require.Equal(t, 1, strings.Count(errOut, "\n"), "%q: %q", args, errOut)
		require.True(t, strings.HasPrefix(errOut, "gocoll bench: "), "%q: %q", args, errOut)
	}
}

// Errors for a bad data type or algorithm list the valid values; --timeout
// takes seconds too.
func TestBadChoicesListValues(t *testing.T) {
	_, _, errOut := runBench(t, "allreduce", "-d", "float8", "--transport=inproc")
	require.Equal(t, `gocoll bench: flag -d: unknown data type "float8" (want float32, float64, bfloat16, float16, int8, uint8, int32, uint32, int64, uint64, float8e4m3, float8e5m2, all, or nccl-tests' float, double, bf16, half, int, uint, f8e4m3, f8e5m2)`+"\n", errOut)
	_, _, errOut = runBench(t, "allreduce", "--algo", "fastest", "--transport=inproc")
	require.Equal(t, `gocoll bench: flag --algo: unknown algorithm "fastest" (want auto, ring, recursive-doubling, chain, binomial, pairwise, dissemination, direct, tree, hierarchical, board)`+"\n", errOut)
	_, _, errOut = runBench(t, "allreduce", "-o", "xor", "--transport=inproc")
	require.Contains(t, errOut, "(want sum, prod, min, max, avg or all)")
	o, err := ParseArgs([]string{"allreduce", "--timeout", "2.5"})
	require.NoError(t, err)
	require.Equal(t, 2500*time.Millisecond, o.Timeout)
}

// TestHelp prints the flags to stdout and exits 0.
func TestHelp(t *testing.T) {
	code, out, errOut := runBench(t, "-h")
	require.Equal(t, ExitOK, code)
	require.Empty(t, errOut)
	for _, f := range []string{"-b, --minbytes", "-np, --np", "--transport", "--json"} {
		require.Contains(t, out, f)
	}
}

// TestJSONFields: every object has the fields the issue asks for.
func TestJSONFields(t *testing.T) {
	code, out, errOut := runBench(t, "reduce,alltoall", "--transport", "inproc", "-np", "2", "-r", "1", "--sizes", "1K", "-n", "1", "--json")
	require.Equal(t, ExitOK, code, errOut)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		for _, k := range []string{"coll", "size", "count", "type", "redop", "root", "time_us", "algbw_gbs",
			"busbw_gbs", "wrong", "transport", "algo", "ranks", "in_place", "rss_peak_bytes"} {
			require.Contains(t, m, k, line)
		}
	}
	rows := decodeRows(t, out)
	require.Equal(t, "reduce", rows[0].Coll)
	require.Equal(t, 1, rows[0].Root)
	require.Equal(t, "sum", rows[0].Redop)
	require.NotNil(t, rows[0].InPlace)
	require.Equal(t, "alltoall", rows[1].Coll)
	require.Equal(t, -1, rows[1].Root)
	require.Equal(t, "none", rows[1].Redop)
	require.Equal(t, int64(128), rows[1].Count) // 1 KiB of float32 over 2 blocks
	require.Equal(t, "inproc", rows[1].Transport)
	require.Equal(t, 2, rows[1].Ranks)
	require.Positive(t, rows[1].RSSPeak)
	require.InEpsilon(t, rows[1].AlgbwGBs/2, rows[1].BusbwGBs, 1e-5)
}

// TestPeersFormat prints the table ../shared/peers/summarize.py reads.
func TestPeersFormat(t *testing.T) {
	code, out, errOut := runBench(t, "allreduce,broadcast,alltoall", "--transport", "inproc", "-np", "4",
		"--sizes", "8,1K", "-n", "2", "--format", "peers", "--label", "ours")
	require.Equal(t, ExitOK, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Regexp(t, `^## bench=gocoll label=ours n=4 `, lines[0])
	require.Regexp(t, `^coll +size +count +time_us +algbw_GBs +busbw_GBs +correct$`, lines[1])
	row := regexp.MustCompile(`^(allreduce|broadcast|alltoall) +(\d+) +(\d+) +[\d.]+ +[\d.]+ +[\d.]+ +OK$`)
	var sizes []string
	for _, l := range lines[2:8] {
		m := row.FindStringSubmatch(l)
		require.NotNil(t, m, l)
		sizes = append(sizes, m[1]+" "+m[2])
	}
	// AllToAll rounds 8 B up to one float per rank, as the peers do.
	require.Equal(t, []string{"allreduce 8", "allreduce 1024", "broadcast 8", "broadcast 1024", "alltoall 16", "alltoall 1024"}, sizes)
	require.Equal(t, "## end label=ours n=4 all_correct=yes", lines[len(lines)-1])
}

// TestSpawnedProcesses runs ranks as processes of this test binary over
// auto, the default, as a run started alone does: all on this host, that
// is shared memory.
func TestSpawnedProcesses(t *testing.T) {
	if !shm.Supported {
		t.Skip("spawned ranks on one host talk over shared memory, which needs Linux")
	}
	code, out, errOut := runBench(t, "allreduce,sendrecv", "-np", "3", "--sizes", "4,64K", "-n", "2", "--json")
	require.Equal(t, ExitOK, code, errOut)
	rows := decodeRows(t, out)
	require.Len(t, rows, 4)
	for _, r := range rows {
		require.Equal(t, "shm", r.Transport)
		require.Equal(t, 3, r.Ranks)
		require.Zero(t, *r.Wrong)
	}
	code, out, errOut = runBench(t, "broadcast", "-np", "2", "--sizes", "1K", "-n", "1")
	require.Equal(t, ExitOK, code, errOut)
	require.Regexp(t, `# Peak RSS per rank \(MiB\) : [\d.]+ [\d.]+\n`, out)
}

// TestInProcessSockets runs goroutine ranks over TCP and MetaRoCE (UDP)
// sockets on loopback.
func TestInProcessSockets(t *testing.T) {
	for _, tr := range []string{"tcp", "metaroce"} {
		code, out, errOut := runBench(t, withQuick("alltoall,reducescatter,broadcast", "--in-process", "--transport", tr, "-np", "3", "--json")...)
		require.Equal(t, ExitOK, code, "%s: %s", tr, errOut)
		rows := decodeRows(t, out)
		require.Equal(t, tr, rows[0].Transport)
		for _, r := range rows {
			require.Zero(t, *r.Wrong, "%s %s %d", tr, r.Coll, r.Size)
		}
	}
}

// TestMemoryLimit refuses buffers beyond the machine's RAM before
// allocating anything.
func TestMemoryLimit(t *testing.T) {
	if physicalMemory() == 0 || physicalMemory() > 60<<30 {
		t.Skip("RAM unknown or too large for the 64 GiB size limit to exceed it")
	}
	code, out, errOut := runBench(t, "allreduce", "--transport", "inproc", "-np", "4", "-b", "64G", "-e", "64G")
	require.Equal(t, ExitUsage, code)
	require.Empty(t, out)
	require.Contains(t, errOut, "RAM")
}

// TestFitLauncher: under a launcher the world size and transport are the
// launcher's; options that contradict them are refused.
func TestFitLauncher(t *testing.T) {
	job := launcher.Job{Launcher: launcher.LauncherOpenMPI, Rank: 1, Size: 4, Transport: launcher.TransportTCP, StoreAtRank0: true}
	o := DefaultOptions()
	require.NoError(t, fitLauncher(&o, job))
	require.Equal(t, "tcp", o.Transport)
	for _, bad := range []func(*Options){
		func(o *Options) { o.Ranks = 2 },
		func(o *Options) { o.Transport = "inproc" },
		func(o *Options) { o.Transport = "mptcp" },
		func(o *Options) { o.InProcess = true },
	} {
		o := DefaultOptions()
		bad(&o)
		require.Error(t, fitLauncher(&o, job))
	}
	o = DefaultOptions()
	o.Ranks = 4
	require.NoError(t, fitLauncher(&o, job))
}

// TestProgress: quiet for short runs, then at most one line per second.
func TestProgress(t *testing.T) {
	var w bytes.Buffer
	start := time.Now()
	p := &progress{w: &w, start: start, last: start, total: 3}
	r := result{coll: collAllGather, geo: geometry{bytes: 4096}}
	p.step(r)
	require.Empty(t, w.String(), "a run younger than progressAfter prints nothing")
	p.start, p.last = start.Add(-progressAfter-time.Second), start.Add(-progressEvery)
	p.step(r)
	p.step(r)
	require.Equal(t, 1, strings.Count(w.String(), "\n"), w.String())
	require.Regexp(t, `^# gocoll bench: allgather 4096 B done \(2 of 3\), [\d.]+ s\n$`, w.String())
}

// TestSpawnedFailure: a rank that fails makes the run fail with status 1
// and an explanation on stderr.
func TestSpawnedFailure(t *testing.T) {
	code, _, errOut := runBench(t, "allreduce", "-np", "2", "--sizes", "1K", "-n", "1", "--timeout", "1ns")
	require.Equal(t, ExitWrong, code, errOut)
	require.Contains(t, errOut, "[rank ")
	require.Contains(t, errOut, "gocoll bench: ")
}

func TestPrefixStripper(t *testing.T) {
	var b bytes.Buffer
	s := &prefixStripper{w: &b, prefix: []byte("[rank 0] ")}
	_, _ = s.Write([]byte("[rank 0] a\n[rank 0] b"))
	_, _ = s.Write([]byte("c\n[rank 1] d\n[rank 0] e"))
	require.Equal(t, "a\nbc\n[rank 1] d\n", b.String())
	s.flush()
	require.Equal(t, "a\nbc\n[rank 1] d\ne", b.String())
}

// TestUnsupportedPair: a type and op without a kernel is a bad command
// line. Every valid pair has a kernel today, so the test stands one in.
func TestUnsupportedPair(t *testing.T) {
	kernelLookup = func(dt dtype.DataType, op reduce.Op) (reduce.Kernel, error) {
		if dt == dtype.BFloat16Type && op == reduce.Prod {
			return nil, reduce.ErrUnsupported
		}
		return reduce.Lookup(dt, op)
	}
	t.Cleanup(func() { kernelLookup = reduce.Lookup })
	code, out, errOut := runBench(t, "allreduce", "--transport", "inproc", "-d", "bf16", "-o", "prod")
	require.Equal(t, ExitUsage, code)
	require.Empty(t, out)
	require.Equal(t, "gocoll bench: allreduce: data type bfloat16 does not support op prod\n", errOut)
	code, _, _ = runBench(t, "broadcast", "--transport", "inproc", "-d", "bf16", "-o", "prod", "--sizes", "64", "-n", "1")
	require.Equal(t, ExitOK, code, "a collective that does not reduce ignores -o")
}
