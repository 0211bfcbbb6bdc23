package collective_test

import (
	"testing"

	"github.com/gocoll/gocoll/collective/collectivetest"
)

// TestBadArgumentsEveryRankErrs runs the bad-argument table over inproc:
// for every call, each rank in turn gets bad input; every rank must err
// promptly and the communicator must still work afterwards.
func TestBadArgumentsEveryRankErrs(t *testing.T) {
	sizes := []int{1, 2, 3, 4, 5}
	if testing.Short() {
		sizes = []int{1, 4}
	}
	collectivetest.RunBadArguments(t, inprocWorld, sizes)
}
