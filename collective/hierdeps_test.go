package collective

import (
	"slices"
	"testing"
)

// TestWritersCoveredAndGaps checks the byte accounting the out-of-place
// hierarchical AllReduce plans with: how much of a range has a writer, and
// the ranges of a piece none writes (copied from send at the end).
func TestWritersCoveredAndGaps(t *testing.T) {
	var ws writers
	ws.set(10, 20, 1)
	ws.set(30, 40, 2)
	ws.set(15, 32, 3) // overwrites the end of the first and the start of the second
	for _, c := range []struct{ lo, hi, want int }{
		{0, 10, 0}, {0, 50, 30}, {12, 18, 6}, {20, 30, 10}, {38, 45, 2}, {40, 50, 0}, {5, 5, 0},
	} {
		if got := ws.covered(c.lo, c.hi); got != c.want {
			t.Errorf("covered(%d, %d) = %d, want %d", c.lo, c.hi, got, c.want)
		}
	}
	for _, c := range []struct {
		lo, hi int
		want   [][2]int
	}{
		{0, 50, [][2]int{{0, 10}, {40, 50}}},
		{10, 40, nil},
		{12, 45, [][2]int{{40, 45}}},
		{0, 5, [][2]int{{0, 5}}},
	} {
		if got := ws.gaps(c.lo, c.hi, nil); !slices.Equal(got, c.want) {
			t.Errorf("gaps(%d, %d) = %v, want %v", c.lo, c.hi, got, c.want)
		}
	}
}
