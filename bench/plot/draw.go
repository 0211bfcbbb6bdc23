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

// Size of one panel of the PNG, and of the caption above the panels.
const (
	panelWidth    = 5 * vg.Inch
	panelHeight   = 3.6 * vg.Inch
	captionHeight = 0.55 * vg.Inch
)

// minPlotSize is the smallest size plotted: below it busbw is latency in
// disguise, and a linear axis would flatten it to nothing (the table
// keeps every size).
const minPlotSize = 64 << 10

// palette gives each label a colour of its own (ours first, in black):
// Okabe and Ito's colours, far apart for every kind of colour vision,
// in an order that puts the most different next to each other. Each
// label also has its own point shape (shapes).
var palette = []color.Color{
	color.RGBA{A: 255},                         // black
	color.RGBA{R: 230, G: 159, A: 255},         // orange
	color.RGBA{G: 114, B: 178, A: 255},         // blue
	color.RGBA{R: 213, G: 94, A: 255},          // vermillion
	color.RGBA{G: 158, B: 115, A: 255},         // bluish green
	color.RGBA{R: 204, G: 121, B: 167, A: 255}, // reddish purple
	color.RGBA{R: 86, G: 180, B: 233, A: 255},  // sky blue
}

var shapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{},
	draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}}

// caption is the PNG's heading: what is drawn, that higher is better,
// and the run's machine and date as the raw file records them.
func caption(res *results) [2]string {
	machine, date := res.host, res.date
	if machine == "" {
		machine = "machine not recorded"
	}
	if date == "" {
		date = "date not recorded"
	}
	return [2]string{
		fmt.Sprintf("busbw (GB/s, linear) against size (log), sizes from %s: higher is better", sizeLabel(minPlotSize)),
		fmt.Sprintf("%s; run of %s", machine, date),
	}
}

// drawPNG draws busbw (linear) against size (log) from minPlotSize up:
// one panel per collective (rows) and rank count (columns), one line per
// label, under a caption (see caption).
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
	width := panelWidth * vg.Length(len(ns))
	height := panelHeight*vg.Length(len(colls)) + captionHeight
	img := vgimg.New(width, height)
	dc := draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	style := plot.New().Title.TextStyle
	style.XAlign, style.YAlign = draw.XCenter, draw.YTop
	for i, line := range caption(res) {
		dc.FillText(style, vg.Point{X: width / 2, Y: height - vg.Millimeter*2 - vg.Length(i)*style.Font.Size*1.4}, line)
	}
	body := draw.Crop(dc, 0, 0, 0, -captionHeight)
	tiles := draw.Tiles{Rows: len(colls), Cols: len(ns), PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align(plots, tiles, body)
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
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = sizeTicks{}
	p.Legend.Top, p.Legend.Left = true, false // above the data: see legendRoom
	p.Legend.XOffs, p.Legend.YOffs = -vg.Millimeter*2, -vg.Millimeter*1
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.Add(plotter.NewGrid())
	r := newLogRange()
	for k, label := range labels {
		var xys plotter.XYs
		for _, size := range sizesOf(res, coll, n) {
			if size < minPlotSize {
				continue
			}
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
		dots.Shape, dots.Radius = shapes[k%len(shapes)], vg.Points(3)
		p.Add(line, dots)
		p.Legend.Add(label, line, dots)
	}
	r.apply(p)
	return p, nil
}

// logRange tracks the data bounds of a panel, so that its log size axis
// always has a positive, non-empty range (one point, or none, included).
type logRange struct{ xlo, xhi, ylo, yhi float64 }

func newLogRange() *logRange {
	return &logRange{xlo: math.Inf(1), xhi: math.Inf(-1), ylo: math.Inf(1), yhi: math.Inf(-1)}
}

func (r *logRange) add(x, y float64) {
	r.xlo, r.xhi = min(r.xlo, x), max(r.xhi, x)
	r.ylo, r.yhi = min(r.ylo, y), max(r.yhi, y)
}

// legendRoom is how far the busbw axis reaches past the highest value, as
// a multiple of it: the top of each panel is left to the legend.
const legendRoom = 1.7

// apply sets the axes: sizes widened a little, busbw from 0 to
// legendRoom times the highest; a default range when there is no data.
func (r *logRange) apply(p *plot.Plot) {
	if r.xlo > r.xhi {
		r.xlo, r.xhi, r.ylo, r.yhi = minPlotSize, 64<<20, 0, 1
	}
	p.X.Min, p.X.Max = r.xlo/1.5, r.xhi*1.5
	p.Y.Min, p.Y.Max = 0, max(r.yhi*legendRoom, 1e-3)
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
