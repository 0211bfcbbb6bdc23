package metaroce

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The receiver's budget grows, at most once a round trip, to twice the
// unconfirmed bytes that landed in posted receives within it when they
// were more than half of it; never while unexpected bytes are held, never
// above its maximum, and never down.
func TestReceiverBudgetGrowth(t *testing.T) {
	ms := time.Millisecond
	r := newReceiver(1000, 100, 1000, 16, 16, nil)
	r.landed = 50 // half: not held to it
	r.growBudget(100*ms, 100*ms)
	require.Equal(t, uint64(100), r.budget)
	r.landed = 80
	r.growBudget(150*ms, 100*ms) // within the round trip: measured on
	require.Equal(t, uint64(100), r.budget)
	r.growBudget(200*ms, 100*ms)
	require.Equal(t, uint64(160), r.budget)
	r.landed, r.held = 150, 1 // held data: the larger budget would hold more
	r.growBudget(300*ms, 100*ms)
	require.Equal(t, uint64(160), r.budget)
	r.landed, r.held = 900, 0
	r.growBudget(400*ms, 100*ms)
	require.Equal(t, uint64(1000), r.budget, "capped at its maximum")
	r.landed = 0
	r.growBudget(500*ms, 100*ms)
	require.Equal(t, uint64(1000), r.budget, "never down")
	require.Equal(t, uint64(1000), r.credit())
}
