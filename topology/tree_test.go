package topology

import (
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func floorLog2(n int) int { return bits.Len(uint(n)) - 1 }

func TestTreeValidateRejects(t *testing.T) {
	valid := func() Tree { // 0 -> {1, 2}, 2 -> {3}
		return Tree{Root: 0, Parent: []int{-1, 0, 0, 2}, Children: [][]int{{1, 2}, nil, {3}, nil}}
	}
	require.NoError(t, valid().Validate())
	cases := []struct {
		name   string
		edit   func(*Tree)
		errSub string
	}{
		{"empty", func(tr *Tree) { *tr = Tree{} }, "no ranks"},
		{"short children", func(tr *Tree) { tr.Children = tr.Children[:3] }, "4 parents but 3 child lists"},
		{"root out of range", func(tr *Tree) { tr.Root = 4 }, "root 4 out of range"},
		{"root with parent", func(tr *Tree) { tr.Parent[0] = 1 }, "root 0 has parent 1"},
		{"second root", func(tr *Tree) { tr.Parent[3] = -1 }, "rank 3 has parent -1"},
		{"self parent", func(tr *Tree) { tr.Parent[3] = 3 }, "rank 3 has parent 3"},
		{"child with other parent", func(tr *Tree) { tr.Children[1] = []int{3} }, "Children[1] lists 3"},
		{"child twice", func(tr *Tree) { tr.Children[2] = []int{3, 3} }, "listed as a child twice"},
		{"child missing", func(tr *Tree) { tr.Children[2] = nil }, "rank 3 is missing from Children[2]"},
		{"cycle", func(tr *Tree) { // 3 -> 1 -> 3, cut off from the root
			tr.Parent[1], tr.Parent[3] = 3, 1
			tr.Children = [][]int{{2}, {3}, nil, {1}}
		}, "only 2 of 4 ranks are reachable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := valid()
			c.edit(&tr)
			err := tr.Validate()
			require.ErrorIs(t, err, ErrInvalid)
			require.ErrorContains(t, err, c.errSub)
		})
	}
}

func TestBinaryTreeTable(t *testing.T) {
	cases := []struct {
		order    []int
		root     int
		parent   []int
		children [][]int
	}{
		{[]int{0}, 0, []int{-1}, [][]int{nil}},
		{[]int{0, 1}, 1, []int{1, -1}, [][]int{nil, {0}}},
		// Positions 1..5: root 4; 1,3 -> 2; 2 -> 4; 5 -> (6 missing) -> 4.
		{[]int{0, 1, 2, 3, 4}, 3, []int{1, 3, 1, -1, 3}, [][]int{nil, {0, 2}, nil, {1, 4}, nil}},
		// Positions 1..6: as above but 5 -> 6 -> 4.
		{[]int{0, 1, 2, 3, 4, 5}, 3, []int{1, 3, 1, -1, 5, 3}, [][]int{nil, {0, 2}, nil, {1, 5}, nil, {4}}},
		{[]int{2, 0, 1}, 0, []int{-1, 0, 0}, [][]int{{2, 1}, nil, nil}},
	}
	for _, c := range cases {
		tr, err := BinaryTree(c.order)
		require.NoError(t, err)
		require.Equal(t, Tree{Root: c.root, Parent: c.parent, Children: c.children}, tr, "%v", c.order)
	}
}

func TestBinaryTreeRejects(t *testing.T) {
	for _, c := range []struct {
		order  []int
		errSub string
	}{
		{nil, "empty order"},
		{[]int{0, 0}, "order[1]: rank 0 appears twice"},
		{[]int{0, 2}, "order[1]: rank 2 out of range [0, 2)"},
		{[]int{-1}, "rank -1 out of range"},
	} {
		_, err := BinaryTree(c.order)
		require.ErrorIs(t, err, ErrInvalid)
		require.ErrorContains(t, err, c.errSub)
	}
	for _, n := range []int{0, -3, MaxRanks + 1} {
		_, err := DoubleBinaryTree(n)
		require.ErrorIs(t, err, ErrInvalid, "n=%d", n)
	}
}

// subtreeSpan returns the lowest and highest position (in order) of the
// ranks in r's subtree, and how many ranks it holds.
func subtreeSpan(tr Tree, pos []int, r int) (lo, hi, size int) {
	lo, hi, size = pos[r], pos[r], 1
	for _, c := range tr.Children[r] {
		clo, chi, csize := subtreeSpan(tr, pos, c)
		lo, hi, size = min(lo, clo), max(hi, chi), size+csize
	}
	return lo, hi, size
}

func TestBinaryTreeProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	sizes := []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 100, 127, 128, 129, 1000}
	for _, n := range sizes {
		for _, order := range [][]int{identity(n), rng.Perm(n)} {
			tr, err := BinaryTree(order)
			require.NoError(t, err)
			require.NoError(t, tr.Validate(), "n=%d", n)
			require.LessOrEqual(t, tr.Depth(), floorLog2(n), "n=%d", n)
			require.Equal(t, order[(1<<floorLog2(n))-1], tr.Root)
			pos := make([]int, n)
			for i, r := range order {
				pos[r] = i
			}
			for i, r := range order {
				require.LessOrEqual(t, len(tr.Children[r]), 2)
				if i%2 == 0 {
					require.Empty(t, tr.Children[r], "n=%d: even position %d must be a leaf", n, i)
				}
				lo, hi, size := subtreeSpan(tr, pos, r)
				require.Equal(t, size, hi-lo+1, "n=%d: subtree of position %d is not contiguous", n, i)
				if len(tr.Children[r]) == 2 {
					require.Less(t, pos[tr.Children[r][0]], i)
					require.Greater(t, pos[tr.Children[r][1]], i)
				}
			}
		}
	}
}

func TestDoubleBinaryTree(t *testing.T) {
	for n := 1; n <= 300; n++ {
		trees, err := DoubleBinaryTree(n)
		require.NoError(t, err)
		for _, tr := range trees {
			require.NoError(t, tr.Validate(), "n=%d", n)
			require.LessOrEqual(t, tr.Depth(), floorLog2(n), "n=%d", n)
		}
		for r := range n {
			inner0, inner1 := len(trees[0].Children[r]) > 0, len(trees[1].Children[r]) > 0
			require.False(t, inner0 && inner1, "n=%d: rank %d is inner in both trees", n, r)
		}
		if n >= 3 {
			require.NotEqual(t, trees[0].Root, trees[1].Root, "n=%d", n)
		}
	}
}
