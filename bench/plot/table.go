package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// view selects what a table or plot shows.
type view struct {
	ours   string   // the label the ratios compare against the others
	labels []string // column order; all labels if empty
	colls  []string // collectives, in order
}

// labelsOf returns the labels to show, ours first.
func (v view) labelsOf(res *results) []string {
	labels := v.labels
	if len(labels) == 0 {
		for _, s := range res.series {
			if !slices.Contains(labels, s.label) {
				labels = append(labels, s.label)
			}
		}
	}
	if i := slices.Index(labels, v.ours); i > 0 {
		labels = append([]string{v.ours}, slices.Delete(slices.Clone(labels), i, i+1)...)
	}
	return labels
}

// ranksOf lists the rank counts present, ascending.
func ranksOf(res *results) []int {
	var ns []int
	for _, s := range res.series {
		if !slices.Contains(ns, s.n) {
			ns = append(ns, s.n)
		}
	}
	slices.Sort(ns)
	return ns
}

// sizesOf lists the sizes measured for coll at n ranks, ascending.
func sizesOf(res *results, coll string, n int) []int64 {
	var sizes []int64
	for p := range res.best {
		if p.coll == coll && p.n == n && !slices.Contains(sizes, p.size) {
			sizes = append(sizes, p.size)
		}
	}
	slices.Sort(sizes)
	return sizes
}

// writeTable writes one markdown table per collective and rank count:
// busbw of every label per size, then ours divided by each other label.
func writeTable(w io.Writer, res *results, v view) error {
	labels := v.labelsOf(res)
	var b strings.Builder
	fmt.Fprintf(&b, "Cells: busbw in GB/s (10^9 B/s), best of the runs, recomputed from size and time; "+
		"x = %s's busbw divided by the peer's (above 1: %s is faster). FAIL marks a wrong result.\n\n", v.ours, v.ours)
	for _, coll := range v.colls {
		for _, n := range ranksOf(res) {
			sizes := sizesOf(res, coll, n)
			if len(sizes) == 0 {
				continue
			}
			fmt.Fprintf(&b, "### %s, %d ranks\n\n| size |", coll, n)
			var others []string
			for _, l := range labels {
				fmt.Fprintf(&b, " %s |", l)
				if l != v.ours {
					others = append(others, l)
				}
			}
			for _, l := range others {
				fmt.Fprintf(&b, " x %s |", l)
			}
			b.WriteString("\n|---:|" + strings.Repeat("---:|", len(labels)+len(others)) + "\n")
			for _, size := range sizes {
				writeRow(&b, res, v.ours, labels, others, point{series{n: n}, coll, size})
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeRow writes one size's row; at holds the coll, size and n.
func writeRow(b *strings.Builder, res *results, ours string, labels, others []string, at point) {
	bw := func(label string) (float64, sample, bool) {
		p := at
		p.label = label
		s, ok := res.best[p]
		return busbw(p, s), s, ok
	}
	fmt.Fprintf(b, "| %s |", sizeName(at.size))
	for _, l := range labels {
		x, s, ok := bw(l)
		switch {
		case !ok:
			b.WriteString(" - |")
		case !s.ok:
			fmt.Fprintf(b, " %s FAIL |", formatBW(x))
		default:
			fmt.Fprintf(b, " %s |", formatBW(x))
		}
	}
	mine, _, haveMine := bw(ours)
	for _, l := range others {
		theirs, _, ok := bw(l)
		if !haveMine || !ok || theirs <= 0 {
			b.WriteString(" - |")
			continue
		}
		fmt.Fprintf(b, " %s |", formatRatio(mine/theirs))
	}
	b.WriteString("\n")
}

// formatRatio prints a ratio with two decimals, or two significant
// digits below 0.1.
func formatRatio(x float64) string {
	if x < 0.1 {
		return fmt.Sprintf("%.2g", x)
	}
	return fmt.Sprintf("%.2f", x)
}

// formatBW prints a bandwidth with three significant digits at least.
func formatBW(x float64) string {
	if x >= 0.1 {
		return fmt.Sprintf("%.3f", x)
	}
	return fmt.Sprintf("%.3g", x)
}

// sizeName prints a size in bytes as 8 B, 64 KiB, 1 MiB.
func sizeName(n int64) string {
	for _, u := range []struct {
		name  string
		shift uint
	}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d B", n)
}
