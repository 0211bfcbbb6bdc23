package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Limits of the input.
const (
	lineBytesMax = 1 << 20 // longest line read
	entriesMax   = 100_000 // distinct (label, n, coll, size) kept
)

// series is one configuration: a label (gocoll, mpi-tcp, ...) at n ranks.
type series struct {
	label string
	n     int
}

// point names one measured cell.
type point struct {
	series
	coll string
	size int64
}

// sample is the best run of a cell and whether every run was correct.
type sample struct {
	timeUs float64
	ok     bool
	runs   int
}

// results are the parsed tables: the best sample per cell, and the order
// in which series first appeared.
type results struct {
	best   map[point]sample
	series []series
	// host is run_all.sh's "# host: ..." line (the machine), date the
	// first "## run ... date=D" (the run's start); "" if absent.
	host, date string
}

var runDate = regexp.MustCompile(`^## run .*\bdate=(\S+)`)

var headerLine = regexp.MustCompile(`^## bench=\S+ label=(\S+) n=(\d+)`)

// knownColls are the collectives whose rows are read, with nccl-tests'
// busbw factor for n ranks.
var knownColls = map[string]func(n int) float64{
	"allreduce":     func(n int) float64 { return 2 * float64(n-1) / float64(n) },
	"broadcast":     func(int) float64 { return 1 },
	"reduce":        func(int) float64 { return 1 },
	"allgather":     func(n int) float64 { return float64(n-1) / float64(n) },
	"reducescatter": func(n int) float64 { return float64(n-1) / float64(n) },
	"alltoall":      func(n int) float64 { return float64(n-1) / float64(n) },
	"sendrecv":      func(int) float64 { return 1 },
}

// parse reads the tables of ../shared/peers (mpi_coll_bench, gloo_bench
// and gocoll bench --format peers print the same): a header "## bench=B
// label=L n=N ...", rows "coll size count time_us algbw busbw correct",
// and "## end ...". Other lines are skipped; a malformed row inside a
// table is an error naming its line.
func parse(r io.Reader) (*results, error) {
	res := &results{best: map[point]sample{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), lineBytesMax)
	var cur *series
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if m := headerLine.FindStringSubmatch(text); m != nil {
			n, err := strconv.Atoi(m[2])
			if err != nil || n < 1 || n > 1<<16 {
				return nil, fmt.Errorf("line %d: bad rank count %q", line, m[2])
			}
			cur = &series{label: m[1], n: n}
			res.addSeries(*cur)
			continue
		}
		if m := runDate.FindStringSubmatch(text); m != nil && res.date == "" {
			res.date = m[1]
		}
		if h, ok := strings.CutPrefix(text, "# host: "); ok && res.host == "" {
			res.host = strings.TrimSpace(h)
		}
		if strings.HasPrefix(text, "## ") {
			cur = nil
			continue
		}
		fields := strings.Fields(text)
		if cur == nil || len(fields) != 7 || knownColls[fields[0]] == nil {
			continue
		}
		if err := res.addRow(*cur, fields); err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return res, nil
}

func (res *results) addSeries(s series) {
	for _, x := range res.series {
		if x == s {
			return
		}
	}
	res.series = append(res.series, s)
}

// addRow keeps the faster of a row and the cell's best so far.
func (res *results) addRow(s series, f []string) error {
	size, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || size < 0 {
		return fmt.Errorf("bad size %q", f[1])
	}
	t, err := strconv.ParseFloat(f[3], 64)
	if err != nil || t < 0 || t != t {
		return fmt.Errorf("bad time %q", f[3])
	}
	p := point{series: s, coll: f[0], size: size}
	old, seen := res.best[p]
	if !seen && len(res.best) >= entriesMax {
		return fmt.Errorf("more than %d cells", entriesMax)
	}
	ok := f[6] == "OK"
	if !seen || t < old.timeUs {
		old.timeUs = t
	}
	old.ok = ok && (!seen || old.ok)
	old.runs++
	res.best[p] = old
	return nil
}

// busbw is the cell's bus bandwidth in GB/s (recomputed from size and
// time: the tables round it), 0 if the time is 0.
func busbw(p point, s sample) float64 {
	if s.timeUs <= 0 {
		return 0
	}
	return float64(p.size) / (s.timeUs * 1e-6) / 1e9 * knownColls[p.coll](p.n)
}
