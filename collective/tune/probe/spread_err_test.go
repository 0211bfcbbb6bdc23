package probe_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/tune"
	"github.com/gocoll/gocoll/collective/tune/probe"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/simnet"
)

// errLinkBroke is the injected failure of a transport send.
var errLinkBroke = errors.New("injected: the link broke")

// failedSend is a transport request that has failed with errLinkBroke.
type failedSend struct{}

func (failedSend) Wait(context.Context) (int, error) { return 0, errLinkBroke }
func (failedSend) Done() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}
func (failedSend) Cancel() {}

// brokenTo fails every transport send to rank to.
type brokenTo struct {
	transport.Endpoint
	to int
}

func (b brokenTo) Send(peer int, tag transport.Tag, buf []byte) transport.Request {
	if peer == b.to {
		return failedSend{}
	}
	return b.Endpoint.Send(peer, tag, buf)
}

// TestSpreadTokenErrorNamesTheRank: a turn's first rank that fails to
// pass the token on makes the next turn's first rank, waiting for it, fail
// with a *transport.PeerError naming the rank it waited for, and saying
// what it waited for. On 2 sites x 2 hosts x 2 ranks with only the WAN
// measured, the spread turns are (1, 5) then (2, 6); rank 1's one
// transport send to rank 2 is the token (its sends in the barriers and
// the measuring pair's round go to others), and it fails. Rank 1's own
// error names rank 2, the rank it passed the token to.
func TestSpreadTokenErrorNamesTheRank(t *testing.T) {
	topo := grid(t, 2, 2, 2)
	if got := probe.SpreadPairs(topo, 2); len(got) != 2 || got[0] != [2]int{1, 5} || got[1] != [2]int{2, 6} {
		t.Fatalf("spread pairs %v, want [[1 5] [2 6]]", got)
	}
	w, err := simnet.NewWorld(topo, tune.DefaultLinks())
	if err != nil {
		t.Fatal(err)
	}
	// Every rank probes; once ranks 1 and 2 have returned, the others,
	// left waiting for them, are called off.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	errs := make([]error, topo.Size())
	var watched, all sync.WaitGroup
	watched.Add(2)
	for r, ep := range w.Endpoints() {
		if r == 1 {
			ep = brokenTo{ep, 2}
		}
		all.Go(func() {
			defer ep.Close()
			c, err := collective.New(ep, 1, collective.Config{Topology: &topo})
			if err == nil {
				_, err = probe.Measure(ctx, c, topo, probe.Options{Now: w.Now, BulkBytes: 1 << 16, Skip: [3]bool{true, true, false}})
			}
			errs[r] = err
			if r == 1 || r == 2 {
				watched.Done()
			}
		})
	}
	watched.Wait()
	cancel()
	all.Wait()
	t.Logf("rank 1: %v", errs[1])
	t.Logf("rank 2: %v", errs[2])
	var pe *transport.PeerError
	if err := errs[2]; err == nil || !errors.As(err, &pe) || pe.Rank != 1 || !strings.Contains(err.Error(), "token from rank 1") {
		t.Errorf("rank 2: %v (%#v), want a *transport.PeerError naming rank 1 and the token it waited for", err, pe)
	}
	if err := errs[1]; err == nil || !errors.Is(err, errLinkBroke) || !strings.Contains(err.Error(), "token to rank 2") {
		t.Errorf("rank 1: %v, want the broken link, naming rank 2 and the token", err)
	}
}
