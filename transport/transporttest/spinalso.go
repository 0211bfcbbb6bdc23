package transporttest

import (
	"context"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport"
)

// SpinAlso checks rank 0's endpoint ep of a world of at least two ranks
// whose spin budget is short (a millisecond or so) against the
// transport.JointSpinner contract: a spinning wait calls the function
// SetSpinAlso gave once in every round, the request's Spin and the
// endpoint's SpinAny alike, and none once it is removed. It leaves no
// request pending and ep's spin without a SpinAlso function.
func SpinAlso(t testing.TB, ep transport.Endpoint) {
	t.Helper()
	js, ok := ep.(transport.JointSpinner)
	if !ok {
		t.Fatalf("%T is not a transport.JointSpinner", ep)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rounds := 0
	js.SetSpinAlso(func() { rounds++ })
	defer js.SetSpinAlso(nil)
	r := ep.Recv(1, tag(9, 1), make([]byte, 64)) // nothing is sent: every spin runs out
	defer r.Cancel()
	sp, ok := r.(transport.Spinner)
	if !ok {
		t.Fatalf("%T's requests (%T) are not transport.Spinners", ep, r)
	}
	if sp.Spin(ctx) {
		t.Fatal("a receive nobody sent to completed")
	}
	if rounds == 0 {
		t.Fatal("Spin made no call of the SpinAlso function")
	}
	before := rounds
	if i := js.SpinAny(ctx, []transport.Request{r}); i >= 0 {
		t.Fatalf("SpinAny returned %d for a receive nobody sent to", i)
	}
	if rounds == before {
		t.Fatal("SpinAny made no call of the SpinAlso function")
	}
	js.SetSpinAlso(nil)
	before = rounds
	sp.Spin(ctx)
	if rounds != before {
		t.Fatalf("%d calls of a removed SpinAlso function", rounds-before)
	}
}
