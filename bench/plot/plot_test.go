package main

import (
	"bytes"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// raw is a peers run: two configurations, one with two runs, cpu lines and
// a failed cell.
const raw = `# run_all.sh targets=ours,mpi-tcp n="2" runs=2 raw=raw-x.txt
## run config=gocoll n=2 run=1 date=x load="1 1 1"
## bench=gocoll label=gocoll n=2 transport=tcp algo=auto dtype=float32 time=max-over-ranks(mean-per-op)
coll             size      count      time_us   algbw_GBs   busbw_GBs  correct
allreduce           8          2        20.00      0.0004      0.0004       OK
allreduce     1048576     262144      1000.00      1.0486      1.0486       OK
alltoall           16          4        30.00      0.0005      0.0003       OK
# Peak RSS per rank (MiB) : 40.1 39.8
## end label=gocoll n=2 all_correct=yes
## cpu label=gocoll n=2 run=1 wall_s=1.0 own_cpu_s=1.0 foreign_cpu_s=0.0 foreign_pct=0 rc=0
## bench=gocoll label=gocoll n=2 transport=tcp
coll size count time_us algbw_GBs busbw_GBs correct
allreduce 8 2 10.00 0.0008 0.0008 OK
allreduce 1048576 262144 2000.00 0.5 0.5 FAIL
## end label=gocoll n=2 all_correct=no
## bench=mpi_coll_bench label=mpi-tcp n=2 lib="Open MPI v4.1.4" dtype=float32
coll             size      count      time_us   algbw_GBs   busbw_GBs  correct
allreduce           8          2        40.00      0.0002      0.0002       OK
allreduce     1048576     262144       500.00      2.0972      2.0972       OK
## end label=mpi-tcp n=2 all_correct=yes
`

func TestParseKeepsBestRun(t *testing.T) {
	res, err := parse(strings.NewReader(raw))
	require.NoError(t, err)
	require.Equal(t, []series{{"gocoll", 2}, {"mpi-tcp", 2}}, res.series)
	small := res.best[point{series{"gocoll", 2}, "allreduce", 8}]
	require.Equal(t, sample{timeUs: 10, ok: true, runs: 2}, small)
	big := res.best[point{series{"gocoll", 2}, "allreduce", 1 << 20}]
	require.Equal(t, sample{timeUs: 1000, ok: false, runs: 2}, big, "a failed run marks the cell")
	require.InDelta(t, 1.048576, busbw(point{series{"gocoll", 2}, "allreduce", 1 << 20}, big), 1e-9)
	require.Len(t, res.best, 5)
}

func TestParseErrors(t *testing.T) {
	for _, bad := range []string{
		"## bench=x label=a n=2\nallreduce 8x 2 1.0 0 0 OK\n",
		"## bench=x label=a n=2\nallreduce 8 2 slow 0 0 OK\n",
		"## bench=x label=a n=0\n",
	} {
		_, err := parse(strings.NewReader(bad))
		require.Error(t, err, bad)
		require.Contains(t, err.Error(), "line ")
	}
	res, err := parse(strings.NewReader("allreduce 8 2 1.0 0 0 OK\n"))
	require.NoError(t, err)
	require.Empty(t, res.best, "rows outside a table are not read")
}

func TestTable(t *testing.T) {
	res, err := parse(strings.NewReader(raw))
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, writeTable(&b, res, view{ours: "gocoll", colls: []string{"allreduce", "alltoall"}}))
	out := b.String()
	require.Contains(t, out, "### allreduce, 2 ranks\n\n| size | gocoll | mpi-tcp | x mpi-tcp |\n|---:|---:|---:|---:|\n")
	require.Contains(t, out, "| 8 B | 0.0008 | 0.0002 | 4.00 |\n")
	require.Contains(t, out, "| 1 MiB | 1.049 FAIL | 2.097 | 0.50 |\n")
	require.Contains(t, out, "### alltoall, 2 ranks\n")
	require.Contains(t, out, "| 16 B | 0.000267 | - | - |\n")
}

func TestRunWritesTableAndPNG(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "raw.txt")
	require.NoError(t, os.WriteFile(in, []byte(raw), 0o644))
	md, pngPath := filepath.Join(dir, "t.md"), filepath.Join(dir, "p.png")
	var out, errOut bytes.Buffer
	code := run([]string{"-md", md, "-png", pngPath, in}, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	f, err := os.Open(pngPath)
	require.NoError(t, err)
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	require.NoError(t, err)
	require.Greater(t, cfg.Width, 300)
	require.Greater(t, cfg.Height, cfg.Width/2, "two rows of panels (allreduce, alltoall), one column")
	table, err := os.ReadFile(md)
	require.NoError(t, err)
	require.Contains(t, string(table), "### allreduce, 2 ranks")

	require.Equal(t, 2, run([]string{"-bogus"}, &out, &errOut))
	require.Equal(t, 2, run(nil, &out, &errOut))
	require.Equal(t, 1, run([]string{filepath.Join(dir, "missing.txt")}, &out, &errOut))
	empty := filepath.Join(dir, "empty.txt")
	require.NoError(t, os.WriteFile(empty, []byte("nothing\n"), 0o644))
	require.Equal(t, 1, run([]string{empty}, &out, &errOut))
}

func TestSizeTicks(t *testing.T) {
	ticks := sizeTicks{}.Ticks(8, 64<<20)
	var labels []string
	for _, tk := range ticks {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	require.Equal(t, []string{"16", "256", "4K", "64K", "1M", "16M"}, labels)
	require.Len(t, ticks, 24)
}

func FuzzParse(f *testing.F) {
	f.Add(raw)
	f.Add("## bench=a label=b n=3\nallreduce 1 1 1 1 1 OK\n## end\n")
	f.Fuzz(func(t *testing.T, s string) {
		res, err := parse(strings.NewReader(s))
		if err != nil {
			return
		}
		for p, smp := range res.best {
			require.GreaterOrEqual(t, p.size, int64(0))
			require.GreaterOrEqual(t, smp.timeUs, 0.0)
			require.GreaterOrEqual(t, busbw(p, smp), 0.0)
		}
	})
}

func Example() {
	res, _ := parse(strings.NewReader(raw))
	var b bytes.Buffer
	_ = writeTable(&b, res, view{ours: "gocoll", colls: []string{"allreduce"}})
	fmt.Print(b.String()[strings.Index(b.String(), "###"):])
	// Output:
	// ### allreduce, 2 ranks
	//
	// | size | gocoll | mpi-tcp | x mpi-tcp |
	// |---:|---:|---:|---:|
	// | 8 B | 0.0008 | 0.0002 | 4.00 |
	// | 1 MiB | 1.049 FAIL | 2.097 | 0.50 |
}

// The caption names what is drawn, "higher is better", and the machine
// and date the raw file records (or says they are missing).
func TestCaption(t *testing.T) {
	res, err := parse(strings.NewReader("# host: 2 cpus, Xeon\n" + raw))
	require.NoError(t, err)
	c := caption(res)
	require.Equal(t, "busbw (GB/s, linear) against size (log), sizes from 64K: higher is better", c[0])
	require.Equal(t, "2 cpus, Xeon; run of x", c[1])
	res, err = parse(strings.NewReader("## bench=a label=b n=2\nallreduce 65536 1 1 1 1 OK\n"))
	require.NoError(t, err)
	require.Equal(t, "machine not recorded; run of date not recorded", caption(res)[1])
}
