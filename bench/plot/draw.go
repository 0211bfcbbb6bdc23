package main

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Size of one panel of the PNG.
const (
	panelWidth  = 5 * vg.Inch
	panelHeight = 3.6 * vg.Inch
)

// palette gives each label a color (ours first, in black).
var palette = []color.Color{
	color.RGBA{A: 255},
	color.RGBA{R: 213, G: 94, A: 255},
	color.RGBA{G: 114, B: 178, A: 255},
	color.RGBA{G: 158, B: 115, A: 255},
	color.RGBA{R: 204, G: 121, B: 167, A: 255},
	color.RGBA{R: 230, G: 159, A: 255},
	color.RGBA{R: 86, G: 180, B: 233, A: 255},
}

// drawPNG draws busbw against size, both on log scales: one panel per
// collective (rows) and rank count (columns), one line per label.
func drawPNG(w io.Writer, res *results, v view) error {
	labels, ns := v.labelsOf(res), ranksOf(res)
	var colls []string
	for _, c := range v.colls {
		if slices.ContainsFunc(ns, func(n int) bool { return len(sizesOf(res, c, n)) > 0 }) {
			colls = append(colls, c)
		}
	}
	if len(colls) == 0 || len(ns) == 0 {
		return fmt.Errorf("nothing to plot")
	}
	plots := make([][]*plot.Plot, len(colls))
	for i, coll := range colls {
		plots[i] = make([]*plot.Plot, len(ns))
		for j, n := range ns {
			p, err := panel(res, coll, n, labels)
			if err != nil {
				return err
			}
			plots[i][j] = p
		}
	}
	img := vgimg.New(panelWidth*vg.Length(len(ns)), panelHeight*vg.Length(len(colls)))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(colls), Cols: len(ns), PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		for j := range plots[i] {
			plots[i][j].Draw(canvases[i][j])
		}
	}
	_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
	return err
}

// panel is one collective at one rank count.
func panel(res *results, coll string, n int, labels []string) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s, %d ranks", coll, n)
	p.X.Label.Text = "size (bytes per rank, nccl-tests)"
	p.Y.Label.Text = "busbw (GB/s)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = sizeTicks{}, plot.LogTicks{Prec: -1}
	p.Legend.Top, p.Legend.Left = false, false                          // bottom right: small sizes sit low on the left
	p.Legend.XOffs, p.Legend.YOffs = -vg.Millimeter*16, vg.Millimeter*3 // the canvas reaches past the data area
	p.Add(plotter.NewGrid())
	r := newLogRange()
	for k, label := range labels {
		var xys plotter.XYs
		for _, size := range sizesOf(res, coll, n) {
			pt := point{series{label, n}, coll, size}
			s, ok := res.best[pt]
			if bw := busbw(pt, s); ok && size > 0 && bw > 0 {
				xys = append(xys, plotter.XY{X: float64(size), Y: bw})
			}
		}
		if len(xys) == 0 {
			continue
		}
		for _, xy := range xys {
			r.add(xy.X, xy.Y)
		}
		line, dots, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		c := palette[k%len(palette)]
		line.Color, dots.Color = c, c
		line.Width = vg.Points(1.5)
		if k > 0 {
			line.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		}
		dots.Shape = draw.CircleGlyph{}
		p.Add(line, dots)
		p.Legend.Add(label, line, dots)
	}
	r.apply(p)
	return p, nil
}

// logRange tracks the data bounds of a panel, so that its log axes always
// have a positive, non-empty range (one point, or none, included).
type logRange struct{ xlo, xhi, ylo, yhi float64 }

func newLogRange() *logRange {
	return &logRange{xlo: math.Inf(1), xhi: math.Inf(-1), ylo: math.Inf(1), yhi: math.Inf(-1)}
}

func (r *logRange) add(x, y float64) {
	r.xlo, r.xhi = min(r.xlo, x), max(r.xhi, x)
	r.ylo, r.yhi = min(r.ylo, y), max(r.yhi, y)
}

// apply sets the axes: the data widened a little (by 2x when it is one
// value), or a default range when there is no data.
func (r *logRange) apply(p *plot.Plot) {
	if r.xlo > r.xhi {
		r.xlo, r.xhi, r.ylo, r.yhi = 1, 1<<20, 1e-3, 1
	}
	p.X.Min, p.X.Max = r.xlo/1.5, r.xhi*1.5
	p.Y.Min, p.Y.Max = r.ylo/2, r.yhi*2
}

// sizeTicks labels powers of two as 8, 1K, 64K, 1M, ... about six times
// per axis, with unlabelled ticks at the powers of two between.
type sizeTicks struct{}

func (sizeTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= lo {
		return nil
	}
	first, last := int(math.Ceil(math.Log2(lo))), int(math.Floor(math.Log2(hi)))
	step := max(1, (last-first+5)/6)
	step += step % 2 // even, so that labels stay on 1, 4, 16, 64, ...
	var ticks []plot.Tick
	for e := first; e <= last && e < 62; e++ {
		t := plot.Tick{Value: math.Ldexp(1, e)}
		if e%step == 0 {
			t.Label = sizeLabel(int64(1) << e)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// sizeLabel is a power-of-two size written short: 8, 64K, 1M, 2G.
func sizeLabel(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%dG", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%dM", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%dK", n>>10)
	}
	return fmt.Sprint(n)
}
