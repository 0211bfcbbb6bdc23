package topology

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGroupBy(t *testing.T) {
	// Ranks 0-5 on hosts a, b, a, c, b, a (a cyclic placement); members
	// leave rank 1 out and come in another order.
	hosts := []string{"a", "b", "a", "c", "b", "a"}
	require.Equal(t, [][]int{{0, 2, 5}, {1, 4}, {3}}, GroupBy([]int{0, 1, 2, 3, 4, 5}, hosts))
	require.Equal(t, [][]int{{4}, {5, 2, 0}, {3}}, GroupBy([]int{4, 5, 2, 3, 0}, hosts))
	require.Equal(t, [][]int{{0, 1}, {2}}, GroupBy([]int{0, 1, 2}, []int{7, 7, 9}))
	require.Nil(t, GroupBy(nil, hosts))
}
