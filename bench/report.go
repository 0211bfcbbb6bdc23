package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gocoll/gocoll/collective/reduce"
)

// runInfo describes a run for the headers of its report.
type runInfo struct {
	opts       Options
	ranks      int
	placement  string // "processes" or "goroutines of one process"
	sharedProc bool   // every rank in this one process (one RSS for all)
}

// summary is what a report's footer needs besides the rows.
type summary struct {
	rssByRank []int64 // peak RSS of each rank at the end, bytes
}

// reporter writes the results of a run as they come.
type reporter interface {
	begin() error
	row(r result) error
	end(s summary) error
}

// newReporter returns the reporter Options ask for.
func newReporter(w io.Writer, info runInfo) reporter {
	switch {
	case info.opts.JSON:
		return &jsonReport{w: w, info: info}
	case info.opts.Format == "peers":
		return &peersReport{w: w, info: info, ok: true}
	}
	return &ncclReport{w: w, info: info}
}

// bandwidths returns nccl-tests' algbw and busbw in GB/s (1e9 bytes/s).
func bandwidths(r result, m measurement) (algbw, busbw float64) {
	if m.timeUs <= 0 {
		return 0, 0
	}
	algbw = float64(r.geo.bytes) / (m.timeUs * 1e-6) / 1e9
	return algbw, algbw * r.coll.info().busFactor(r.ranks)
}

// opName is the redop column: the op, or "none" for data movement.
func opName(r result) string {
	if r.op == reduce.InvalidOp {
		return "none"
	}
	return r.op.String()
}

// ncclReport prints nccl-tests' table, one block per collective.
type ncclReport struct {
	w       io.Writer
	info    runInfo
	cur     *collInfo // collective of the open block, nil before the first
	wrong   int64     // of the open block
	busbw   float64   // sum over the open block's measurements
	busbwN  int
	anyFail bool
	steal   stealTally
}

const ncclKeyWidth = 52 // width of "size count type redop root"

func (t *ncclReport) begin() error {
	o := t.info.opts
	step := fmt.Sprintf("%d(factor)", o.StepFactor)
	if o.StepFactor <= 1 {
		step = fmt.Sprintf("%d(bytes)", o.StepBytes)
	}
	sizes := fmt.Sprintf("minBytes %d maxBytes %d step: %s", o.MinBytes, o.MaxBytes, step)
	if len(o.Sizes) > 0 {
		sizes = "sizes " + strings.Trim(fmt.Sprint(o.Sizes), "[]")
	}
	loops := fmt.Sprintf("warmup iters: %d iters: %d", o.Warmup, o.Iters)
	if o.PeersSchedule > 0 {
		loops = fmt.Sprintf("warmup iters and iters: the peers' schedule x%g", o.PeersSchedule)
	}
	_, err := fmt.Fprintf(t.w, "# gocoll bench %s: %d ranks as %s, transport %s, algo %v\n# %s %s agg iters: %d blocking: %d validation: %d\n#\n",
		strings.Join(o.Colls, ","), t.info.ranks, t.info.placement, o.Transport, o.Algo, sizes, loops, o.AggIters, o.Blocking, o.Check)
	return err
}

func (t *ncclReport) row(r result) error {
	if t.cur != r.coll.info() {
		if err := t.closeBlock(); err != nil {
			return err
		}
		t.cur = r.coll.info()
		if err := t.blockHeader(); err != nil {
			return err
		}
	}
	t.steal.add(r)
	var b strings.Builder
	fmt.Fprintf(&b, "%12d  %12d  %8s  %6s  %6d", r.geo.bytes, r.geo.count, r.dt, opName(r), r.root)
	for v := range numVariants {
		m := r.meas[v]
		if !m.ran {
			fmt.Fprintf(&b, "  %7s  %6s  %6s  %6s", "N/A", "N/A", "N/A", "N/A")
			continue
		}
		alg, bus := bandwidths(r, m)
		t.busbw += bus
		t.busbwN++
		t.wrong += m.wrong
		fmt.Fprintf(&b, "  %7s  %6.2f  %6.2f  %6s", formatTime(m.timeUs), alg, bus, t.wrongText(m))
	}
	_, err := fmt.Fprintln(t.w, b.String())
	return err
}

func (t *ncclReport) wrongText(m measurement) string {
	if t.info.opts.Check == 0 {
		return "N/A"
	}
	return fmt.Sprint(m.wrong)
}

// formatTime prints microseconds in 7 columns as nccl-tests does.
func formatTime(us float64) string {
	switch {
	case us >= 10000:
		return fmt.Sprintf("%7.0f", us)
	case us >= 100:
		return fmt.Sprintf("%7.1f", us)
	}
	return fmt.Sprintf("%7.2f", us)
}

func (t *ncclReport) blockHeader() error {
	variant := func(label string) string {
		pad := 33 - len(label)
		return strings.Repeat(" ", pad/2+pad%2) + label + strings.Repeat(" ", pad/2)
	}
	head := "#" + strings.Repeat(" ", ncclKeyWidth-1) + variant("out-of-place") + variant("in-place")
	cols := fmt.Sprintf("#%11s  %12s  %8s  %6s  %6s", "size", "count", "type", "redop", "root")
	units := fmt.Sprintf("#%11s  %12s  %8s  %6s  %6s", "(B)", "(elements)", "", "", "")
	for range numVariants {
		cols += fmt.Sprintf("  %7s  %6s  %6s  %6s", "time", "algbw", "busbw", "#wrong")
		units += fmt.Sprintf("  %7s  %6s  %6s  %6s", "(us)", "(GB/s)", "(GB/s)", "")
	}
	_, err := fmt.Fprintf(t.w, "# %s\n%s\n%s\n%s\n", t.cur.name, strings.TrimRight(head, " "), cols, strings.TrimRight(units, " "))
	return err
}

// closeBlock prints the footers of the open block, if any.
func (t *ncclReport) closeBlock() error {
	if t.cur == nil {
		return nil
	}
	status := "OK"
	if t.wrong > 0 {
		status = "FAILED"
		t.anyFail = true
	}
	avg := 0.0
	if t.busbwN > 0 {
		avg = t.busbw / float64(t.busbwN)
	}
	_, err := fmt.Fprintf(t.w, "# Out of bounds values : %d %s\n# Avg bus bandwidth : %.6g\n#\n", t.wrong, status, avg)
	t.cur, t.wrong, t.busbw, t.busbwN = nil, 0, 0, 0
	return err
}

func (t *ncclReport) end(s summary) error {
	if err := t.closeBlock(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(t.w, footer(t.info, s, t.steal))
	return err
}

// footer is the RSS line and the stolen-CPU lines that end both table
// formats. They are "# " lines: bench/plot and summarize.py skip them, and
// a "## " line between the groups peers.sh merges would end bench/plot's
// table.
func footer(info runInfo, s summary, steal stealTally) string {
	return strings.Join(append([]string{rssLine(info, s)}, steal.lines()...), "\n")
}

// rssLine reports the peak resident set of every rank in MiB.
func rssLine(info runInfo, s summary) string {
	if info.sharedProc || len(s.rssByRank) == 0 {
		var peak int64
		for _, v := range s.rssByRank {
			peak = max(peak, v)
		}
		return fmt.Sprintf("# Peak RSS : %.1f MiB for the whole process (%d ranks in it)", mib(peak), info.ranks)
	}
	parts := make([]string, len(s.rssByRank))
	for i, v := range s.rssByRank {
		parts[i] = fmt.Sprintf("%.1f", mib(v))
	}
	return "# Peak RSS per rank (MiB) : " + strings.Join(parts, " ")
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// jsonRow is one size of one collective in --json output.
type jsonRow struct {
	Coll      string        `json:"coll"`
	Size      int64         `json:"size"`
	Count     int64         `json:"count"`
	Type      string        `json:"type"`
	Redop     string        `json:"redop"`
	Root      int           `json:"root"`
	TimeUs    float64       `json:"time_us"`
	AlgbwGBs  float64       `json:"algbw_gbs"`
	BusbwGBs  float64       `json:"busbw_gbs"`
	Wrong     *int64        `json:"wrong"` // null when not checked
	InPlace   *jsonMeasured `json:"in_place"`
	Transport string        `json:"transport"`
	Algo      string        `json:"algo"`
	Ranks     int           `json:"ranks"`
	RSSPeak   int64         `json:"rss_peak_bytes"` // the largest of any rank so far
	StealPct  *float64      `json:"steal_pct"`      // null when unknown or the loop too short
}

// jsonMeasured is the in-place measurement of a jsonRow.
type jsonMeasured struct {
	TimeUs   float64  `json:"time_us"`
	AlgbwGBs float64  `json:"algbw_gbs"`
	BusbwGBs float64  `json:"busbw_gbs"`
	Wrong    *int64   `json:"wrong"`
	StealPct *float64 `json:"steal_pct"`
}

// jsonReport prints one JSON object per line, one per size.
type jsonReport struct {
	w    io.Writer
	info runInfo
}

func (j *jsonReport) begin() error { return nil }

func (j *jsonReport) row(r result) error {
	o := j.info.opts
	wrong := func(m measurement) *int64 {
		if o.Check == 0 {
			return nil
		}
		return &m.wrong
	}
	oop := r.meas[outOfPlace]
	alg, bus := bandwidths(r, oop)
	row := jsonRow{Coll: r.coll.String(), Size: r.geo.bytes, Count: r.geo.count, Type: r.dt.String(),
		Redop: opName(r), Root: r.root, TimeUs: round6(oop.timeUs), AlgbwGBs: round6(alg), BusbwGBs: round6(bus), Wrong: wrong(oop),
		Transport: o.Transport, Algo: o.Algo.String(), Ranks: r.ranks, RSSPeak: r.rssPeak, StealPct: jsonPct(oop.steal)}
	if ip := r.meas[inPlace]; ip.ran {
		a, b := bandwidths(r, ip)
		row.InPlace = &jsonMeasured{TimeUs: round6(ip.timeUs), AlgbwGBs: round6(a), BusbwGBs: round6(b), Wrong: wrong(ip), StealPct: jsonPct(ip.steal)}
	}
	line, err := json.Marshal(row)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(j.w, "%s\n", line)
	return err
}

func (j *jsonReport) end(summary) error { return nil }

// round6 keeps six significant digits (measurements have fewer).
func round6(x float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
	if err != nil {
		return x
	}
	return r
}

// peersReport prints the table format of ../shared/peers (run_all.sh's
// OURS_CMD hook), which its summarize.py reads next to OpenMPI and Gloo.
type peersReport struct {
	w     io.Writer
	info  runInfo
	ok    bool
	steal stealTally
}

func (p *peersReport) begin() error {
	o := p.info.opts
	_, err := fmt.Fprintf(p.w, "## bench=gocoll label=%s n=%d transport=%s algo=%v dtype=%v time=max-over-ranks(mean-per-op)\n%-10s %10s %10s %12s %11s %11s %8s\n",
		o.Label, p.info.ranks, o.Transport, o.Algo, o.DataType, "coll", "size", "count", "time_us", "algbw_GBs", "busbw_GBs", "correct")
	return err
}

// peersVariant is the measurement the peers report: Broadcast in place
// (MPI_Bcast has one buffer), everything else out of place.
func peersVariant(k collKind) variant {
	if k == collBroadcast {
		return inPlace
	}
	return outOfPlace
}

func (p *peersReport) row(r result) error {
	m := r.meas[peersVariant(r.coll)]
	p.steal.add(r)
	alg, bus := bandwidths(r, m)
	correct := "N/A"
	if p.info.opts.Check > 0 {
		correct = "OK"
		if m.wrong > 0 {
			correct, p.ok = "FAIL", false
		}
	}
	_, err := fmt.Fprintf(p.w, "%-10s %10d %10d %12.2f %11.4f %11.4f %8s\n", r.coll, r.geo.bytes,
		r.geo.bytes/int64(r.dt.Size()), m.timeUs, alg, bus, correct)
	return err
}

func (p *peersReport) end(s summary) error {
	yes := "yes"
	if !p.ok {
		yes = "no"
	}
	_, err := fmt.Fprintf(p.w, "%s\n## end label=%s n=%d all_correct=%s\n", footer(p.info, s, p.steal), p.info.opts.Label, p.info.ranks, yes)
	return err
}
