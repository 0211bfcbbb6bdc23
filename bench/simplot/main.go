// Command simplot turns bench/sim.sh's raw gocoll sim outputs into a
// markdown table and a PNG plot.
//
// Usage: go run ./bench/simplot -md table.md -png sweep.png [-model RAW]... SWEEP-RAW...
//
// A raw file is gocoll sim's output: a "# gocoll sim: COLL on N ranks ..."
// title, comment lines, a header row and one row per size and algorithm
// (size, algorithm, mode, time, algbw, busbw, predicted, sim/model, wall).
// each -model gives a run whose every row is checked against the cost
// model (within ±15 %); each other file gives a sweep whose table shows, per
// size, every algorithm's simulated time, tree against the better of ring
// and recursive doubling, and the fastest; the PNG has one panel per sweep,
// simulated time (solid) and the model's (dashed) against size.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gocoll/gocoll/bench"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// row is one line of gocoll sim's table.
type row struct {
	size        int64
	algo, mode  string
	sim, model  time.Duration
	busbw, wall string
}

// run is one raw file.
type run struct {
	title string
	ranks string
	rows  []row
}

var (
	titleRE = regexp.MustCompile(`^# gocoll sim: (\S+) on (\d+) ranks`)
	rowRE   = regexp.MustCompile(`^\s*(\S+)\s+(\S+)\s+(data|free/\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$`)
)

func parse(name string) (run, error) {
	f, err := os.Open(name)
	if err != nil {
		return run{}, err
	}
	defer f.Close()
	var r run
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := titleRE.FindStringSubmatch(line); m != nil {
			r.title, r.ranks = strings.TrimPrefix(line, "# gocoll sim: "), m[2]
			continue
		}
		m := rowRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		size, err := bench.ParseSize(m[1])
		if err != nil {
			return r, fmt.Errorf("%s: %q: %v", name, line, err)
		}
		sim, err := time.ParseDuration(m[4])
		if err != nil {
			return r, fmt.Errorf("%s: %q: %v", name, line, err)
		}
		model, _ := time.ParseDuration(m[7]) // "-": none
		// ring/C and tree/C are the ring AllReduce and the trees on the
		// model's C channels: the ring and tree columns.
		algo, _, _ := strings.Cut(strings.TrimPrefix(m[2], "auto:"), "/")
		r.rows = append(r.rows, row{size: size, algo: algo, mode: m[3], sim: sim, model: model, busbw: m[6], wall: m[9]})
	}
	if err := sc.Err(); err != nil {
		return r, err
	}
	if r.title == "" || len(r.rows) == 0 {
		return r, fmt.Errorf("%s: no gocoll sim table in it", name)
	}
	return r, nil
}

func main() {
	md := flag.String("md", "", "markdown table to write")
	png := flag.String("png", "", "PNG to write")
	var models []string
	flag.Func("model", "raw file of a sim-versus-model run (repeatable)", func(s string) error {
		models = append(models, s)
		return nil
	})
	flag.Parse()
	if err := mainErr(*md, *png, models, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "simplot:", err)
		os.Exit(1)
	}
}

func mainErr(md, png string, models, sweeps []string) error {
	var out strings.Builder
	for _, model := range models {
		r, err := parse(model)
		if err != nil {
			return err
		}
		modelTable(&out, r)
	}
	var runs []run
	for _, s := range sweeps {
		r, err := parse(s)
		if err != nil {
			return err
		}
		runs = append(runs, r)
		sweepTable(&out, r)
	}
	if md != "" {
		if err := os.WriteFile(md, []byte(out.String()), 0o644); err != nil {
			return err
		}
	} else {
		fmt.Print(out.String())
	}
	if png != "" && len(runs) > 0 {
		return draw2(png, runs)
	}
	return nil
}

// modelTable writes every row of r beside the model, and whether it is
// within 15 %.
func modelTable(w io.Writer, r run) {
	fmt.Fprintf(w, "## Simulated against the cost model: %s\n\n", r.title)
	fmt.Fprintf(w, "| size | algorithm | mode | simulated | model | sim/model | within 15 %% | busbw GB/s | wall |\n|---|---|---|---|---|---|---|---|---|\n")
	worst := 1.0
	for _, x := range r.rows {
		ratio := x.sim.Seconds() / x.model.Seconds()
		ok := "yes"
		if math.Abs(ratio-1) > 0.15 {
			ok = "**no**"
		}
		if math.Abs(ratio-1) > math.Abs(worst-1) {
			worst = ratio
		}
		fmt.Fprintf(w, "| %s | %s | %s | %v | %v | %.3f | %s | %s | %s |\n", bench.FormatSize(x.size), x.algo, x.mode, x.sim, x.model, ratio, ok, x.busbw, x.wall)
	}
	fmt.Fprintf(w, "\nFarthest from the model: sim/model %.3f.\n\n", worst)
}

// sweepTable writes, per size, each algorithm's simulated time, the tree
// against the better of ring and recursive doubling, the fastest, and the
// model's choice (the least predicted time: what auto runs) against it.
func sweepTable(w io.Writer, r run) {
	algos := []string{}
	worst := 0.0
	bySize := map[int64]map[string]row{}
	var sizes []int64
	for _, x := range r.rows {
		if !slices.Contains(algos, x.algo) {
			algos = append(algos, x.algo)
		}
		if bySize[x.size] == nil {
			bySize[x.size] = map[string]row{}
			sizes = append(sizes, x.size)
		}
		bySize[x.size][x.algo] = x
	}
	fmt.Fprintf(w, "## Sweep: %s\n\nSimulated time (the model's in brackets).\n\n| size |", r.title)
	for _, a := range algos {
		fmt.Fprintf(w, " %s |", a)
	}
	fmt.Fprintf(w, " tree / best of ring and rec. doubling | fastest | model's choice | choice / fastest |\n|---|")
	for range algos {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w, "---|---|---|---|")
	for _, s := range sizes {
		m := bySize[s]
		fmt.Fprintf(w, "| %s |", bench.FormatSize(s))
		best, choice := "", ""
		for _, a := range algos {
			x, ok := m[a]
			if !ok {
				fmt.Fprint(w, " - |") // not run at this size
				continue
			}
			fmt.Fprintf(w, " %v (%v) |", x.sim, x.model)
			if best == "" || x.sim < m[best].sim {
				best = a
			}
			if m[a].model > 0 && (choice == "" || m[a].model < m[choice].model) {
				choice = a
			}
		}
		other := min(nonzero(m["ring"].sim), nonzero(m["recursive-doubling"].sim))
		vsTree := "-"
		if m["tree"].sim > 0 && other < math.MaxInt64 {
			vsTree = fmt.Sprintf("%.2f", m["tree"].sim.Seconds()/other.Seconds())
		}
		ratio := m[choice].sim.Seconds() / m[best].sim.Seconds()
		fmt.Fprintf(w, " %s | %s | %s | %.3f |\n", vsTree, best, choice, ratio)
		worst = max(worst, ratio)
	}
	fmt.Fprintf(w, "\nThe model's choice (auto) is at most %.3f times the fastest simulated algorithm.\n\n", worst)
}

func nonzero(d time.Duration) time.Duration {
	if d == 0 {
		return math.MaxInt64
	}
	return d
}

var palette = []color.Color{
	color.RGBA{A: 255},
	color.RGBA{R: 213, G: 94, A: 255},
	color.RGBA{G: 114, B: 178, A: 255},
	color.RGBA{G: 158, B: 115, A: 255},
	color.RGBA{R: 204, G: 121, B: 167, A: 255},
}

// draw2 draws one panel per sweep, side by side.
func draw2(file string, runs []run) error {
	const w, h = 5 * vg.Inch, 3.8 * vg.Inch
	img := vgimg.New(vg.Length(len(runs))*w, h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(runs)}
	for i, r := range runs {
		p := plot.New()
		p.Title.Text = r.ranks + " ranks: AllReduce time (sim solid, model dashed)"
		p.X.Label.Text = "bytes"
		p.Y.Label.Text = "seconds"
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
		p.Legend.Top, p.Legend.Left = true, true
		p.Add(plotter.NewGrid())
		var algos []string
		for _, x := range r.rows {
			if !slices.Contains(algos, x.algo) {
				algos = append(algos, x.algo)
			}
		}
		for j, a := range algos {
			var sim, mod plotter.XYs
			for _, x := range r.rows {
				if x.algo == a && x.sim > 0 && x.model > 0 {
					sim = append(sim, plotter.XY{X: float64(x.size), Y: x.sim.Seconds()})
					mod = append(mod, plotter.XY{X: float64(x.size), Y: x.model.Seconds()})
				}
			}
			if len(sim) == 0 {
				continue
			}
			ls, err := plotter.NewLine(sim)
			if err != nil {
				return err
			}
			lm, err := plotter.NewLine(mod)
			if err != nil {
				return err
			}
			ls.Color, lm.Color = palette[j%len(palette)], palette[j%len(palette)]
			ls.Width, lm.Width = vg.Points(1.5), vg.Points(1)
			lm.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(ls, lm)
			p.Legend.Add(a, ls)
		}
		p.Draw(tiles.At(dc, i, 0))
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
