// Command labplot draws bench/lab.sh's PNG plots from the raw outputs it
// keeps: for every scenario, goodput over time of each transport's run
// (SCENARIO.goodput.png) and, where a MetaRoCE run printed its paths, each
// path's goodput over time (SCENARIO.paths.png).
//
// Usage: go run ./bench/labplot -out DIR RAW...
//
// A raw file is named SCENARIO.LABEL.txt (LABEL: metaroce, tcp, mptcp, or
// more, like metaroce.s1h2); its interval lines are those of gocoll bench
// p2p's table ("[rank 0] END GOODPUT ...", END with a decimal point) and,
// after each, its path lines ("[rank 0] PATH STATE SENT(MiB) ..."), or
// bench/lab.sh's python3 receiver's ("[rank 0] END GOODPUT"). A file with
// no interval lines (an AllReduce run) is skipped.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// series is one run: goodput per interval and, per path, Mbit/s per interval.
type series struct {
	t, mbps []float64
	paths   map[int]plotter.XYs
}

func main() {
	out := flag.String("out", ".", "directory for the PNGs")
	flag.Parse()
	if err := run(*out, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "labplot:", err)
		os.Exit(1)
	}
}

func run(out string, files []string) error {
	byScenario := map[string]map[string]*series{}
	for _, f := range files {
		base := strings.TrimSuffix(filepath.Base(f), ".txt")
		scen, label, ok := strings.Cut(base, ".")
		if !ok {
			continue
		}
		s, err := parse(f)
		if err != nil {
			return err
		}
		if len(s.t) == 0 {
			continue
		}
		if byScenario[scen] == nil {
			byScenario[scen] = map[string]*series{}
		}
		byScenario[scen][label] = s
	}
	for scen, runs := range byScenario {
		if err := drawGoodput(filepath.Join(out, scen+".goodput.png"), scen, runs); err != nil {
			return err
		}
		if m := runs["metaroce"]; m != nil && len(m.paths) > 0 {
			if err := drawPaths(filepath.Join(out, scen+".paths.png"), scen, m); err != nil {
				return err
			}
		}
	}
	return nil
}

// parse reads one raw file's interval and path lines.
func parse(name string) (*series, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := &series{paths: map[int]plotter.XYs{}}
	var end, prev float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 4 || fs[0] != "[rank" || fs[1] != "0]" {
			continue
		}
		if strings.Contains(fs[2], ".") {
			e, err1 := strconv.ParseFloat(fs[2], 64)
			g, err2 := strconv.ParseFloat(fs[3], 64)
			if err1 != nil || err2 != nil {
				continue
			}
			prev, end = end, e
			s.t, s.mbps = append(s.t, e), append(s.mbps, g)
			continue
		}
		idx, err := strconv.Atoi(fs[2])
		if err != nil || len(fs) < 5 || len(s.t) == 0 || end <= prev {
			continue
		}
		mib, err := strconv.ParseFloat(fs[4], 64)
		if err != nil {
			continue
		}
		s.paths[idx] = append(s.paths[idx], plotter.XY{X: end, Y: mib * 8 * 1.048576 / (end - prev)})
	}
	return s, sc.Err()
}

var palette = []color.Color{
	color.RGBA{A: 255},
	color.RGBA{R: 213, G: 94, A: 255},
	color.RGBA{G: 114, B: 178, A: 255},
	color.RGBA{G: 158, B: 115, A: 255},
	color.RGBA{R: 204, G: 121, B: 167, A: 255},
	color.RGBA{R: 230, G: 159, A: 255},
	color.RGBA{R: 86, G: 180, B: 233, A: 255},
	color.RGBA{R: 120, G: 120, B: 120, A: 255},
	color.RGBA{R: 150, G: 75, A: 255},
	color.RGBA{R: 40, G: 200, B: 40, A: 255},
	color.RGBA{R: 120, B: 200, A: 255},
	color.RGBA{R: 200, G: 200, A: 255},
}

// dashes tells the transports apart where one scenario has several runs
// of each: MetaRoCE solid, TCP dashed, MPTCP dotted.
func dashes(label string) []vg.Length {
	switch {
	case strings.HasPrefix(label, "mptcp"):
		return []vg.Length{vg.Points(1), vg.Points(3)}
	case strings.HasPrefix(label, "tcp"):
		return []vg.Length{vg.Points(6), vg.Points(3)}
	}
	return nil
}

func newPlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "time (s)"
	p.Y.Label.Text = "goodput (Mbit/s)"
	p.Y.Min = 0
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

func addLine(p *plot.Plot, name string, xys plotter.XYs, i int) error {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return err
	}
	l.Color = palette[i%len(palette)]
	l.Width = vg.Points(1.5)
	l.Dashes = dashes(name)
	p.Add(l)
	p.Legend.Add(name, l)
	return nil
}

func drawGoodput(file, scen string, runs map[string]*series) error {
	p := newPlot(scen + ": goodput per interval")
	labels := make([]string, 0, len(runs))
	for l := range runs {
		labels = append(labels, l)
	}
	slices.Sort(labels)
	for i, l := range labels {
		s := runs[l]
		xys := make(plotter.XYs, len(s.t))
		for j := range s.t {
			xys[j] = plotter.XY{X: s.t[j], Y: s.mbps[j]}
		}
		if err := addLine(p, l, xys, i); err != nil {
			return err
		}
	}
	p.Y.Max *= 1.2 // room for the legend
	return p.Save(6*vg.Inch, 4*vg.Inch, file)
}

func drawPaths(file, scen string, s *series) error {
	p := newPlot(scen + ": MetaRoCE per path (payload sent, resends included)")
	idx := make([]int, 0, len(s.paths))
	for i := range s.paths {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	for i, k := range idx {
		if err := addLine(p, "path "+strconv.Itoa(k), s.paths[k], i); err != nil {
			return err
		}
	}
	p.Y.Max *= 1.2 // room for the legend
	return p.Save(6*vg.Inch, 4*vg.Inch, file)
}
