package collective_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective"
)

// maxReportLines bounds a stall report's lines at any number of pending
// operations (see StallReport.String).
const maxReportLines = 20

// stallInterval is the least time between two stall reports of one
// communicator whose StallTimeout is under a second (see StallReport).
const stallInterval = time.Second

// TestStallReportUnderAStorm has rank 1 post more sends to rank 0 than the
// flight record holds, which rank 0 leaves unreceived past the stall
// threshold (an unexpected-message storm) until a report has counted
// every one of them, and for 1.5 s at least: every stall report names a
// real operation (never a zero record, even when the stalled operation's
// record has left the ring), stays within maxReportLines whatever the
// number of pending operations, says how many it did not list, and names
// the rank the sends wait on; and the reports come at most one per
// stallInterval, not one per operation.
func TestStallReportUnderAStorm(t *testing.T) {
	const sends = 3 * collective.FlightRecords
	const threshold = 100 * time.Millisecond
	var mu sync.Mutex
	var reports []collective.StallReport
	counted := make(chan struct{}) // closed by the first report that counts every send
	eps := inprocWorld(t, 2)
	comms := make([]*collective.Comm, 2)
	for r, ep := range eps {
		c, err := collective.New(ep, 1, collective.Config{StallTimeout: threshold, OnStall: func(s collective.StallReport) {
			mu.Lock()
			defer mu.Unlock()
			reports = append(reports, s)
			if len(s.Pending) == sends {
				select {
				case <-counted:
				default:
					close(counted)
				}
			}
		}})
		require.NoError(t, err)
		comms[r] = c
	}
	hold := 1500 * time.Millisecond
	errs := onAll(t, comms, 30*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
		buf := make([]byte, 4096) // beyond a header's inline bytes
		if r == 0 {
			// The storm: nothing received until a report has counted every
			// send (which may come after a first one if posting them took
			// longer than the threshold), and for hold at least.
			time.Sleep(hold)
			select {
			case <-counted:
			case <-ctx.Done():
				return errors.New("no stall report counted every pending send")
			}
			for range sends {
				if err := collective.Recv(ctx, c, buf, 1); err != nil {
					return err
				}
			}
			return nil
		}
		hs := make([]*collective.Handle, sends)
		for i := range hs {
			hs[i] = collective.SendAsync(ctx, c, buf, 0)
		}
		for _, h := range hs {
			if err := h.Wait(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, reports)
	// In the order they were made (a callback may run late).
	slices.SortFunc(reports, func(a, b collective.StallReport) int { return a.At.Compare(b.At) })
	t.Logf("%d reports; the first:\n%s", len(reports), reports[0])
	for i, s := range reports {
		text := s.String()
		if i > 0 {
			require.GreaterOrEqual(t, s.At.Sub(reports[i-1].At), stallInterval, "reports %d and %d: at most one per interval", i-1, i)
		}
		require.Equal(t, 1, s.Op.Rank, text)
		require.Equal(t, 2, s.Op.Size, text)
		require.Equal(t, collective.KindSendRecv, s.Op.Kind, text)
		require.Equal(t, collective.OpRunning, s.Op.State, text)
		require.False(t, s.Op.Start.IsZero(), text)
		require.GreaterOrEqual(t, s.At.Sub(s.Op.Start), threshold, text)
		require.NotContains(t, text, "invalid", text)
		require.NotContains(t, text, "of 0", text)
		require.Equal(t, 0, s.Culprit(), text)
		require.True(t, slices.ContainsFunc(s.Pending, func(p collective.OpRecord) bool {
			return p.Comm == s.Op.Comm && p.Seq == s.Op.Seq && p.Kind == s.Op.Kind && p.Start.Equal(s.Op.Start)
		}), "the stalled operation is among the pending ones: %s", text)
		lines := strings.Count(text, "\n")
		require.LessOrEqual(t, lines, maxReportLines, text)
		if len(s.Pending) > maxReportLines {
			require.Contains(t, text, "more", text)
			require.Contains(t, text, "on rank 0", text)
		}
	}
}
