package collective_test

import (
	"testing"

	"github.com/gocoll/gocoll/collective/collectivetest"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/inproc"
)

// inprocWorld builds an in-process world for the table tests.
func inprocWorld(t testing.TB, n int) []transport.Endpoint {
	w, err := inproc.NewWorld(n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w.Endpoints()
}

func TestTableInProcess(t *testing.T) {
	opts := collectivetest.Options{}
	if testing.Short() {
		opts.Sizes = []int{1, 2, 3, 5, 8}
		opts.Counts = []int{0, 1, 7, 1023}
	}
	collectivetest.Run(t, inprocWorld, opts)
}
