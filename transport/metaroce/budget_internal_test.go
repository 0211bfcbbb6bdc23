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
	r.growBudget(100*ms, 100*ms, 1<<20)
	require.Equal(t, uint64(100), r.budget)
	r.landed = 80
	r.growBudget(150*ms, 100*ms, 1<<20) // within the round trip: measured on
	require.Equal(t, uint64(100), r.budget)
	r.growBudget(200*ms, 100*ms, 1<<20)
	require.Equal(t, uint64(160), r.budget)
	r.landed, r.held = 150, 1 // held data: the larger budget would hold more
	r.growBudget(300*ms, 100*ms, 1<<20)
	require.Equal(t, uint64(160), r.budget)
	r.landed, r.held = 900, 0
	r.growBudget(400*ms, 100*ms, 1<<20)
	require.Equal(t, uint64(1000), r.budget, "capped at its maximum")
	r.landed = 0
	r.growBudget(500*ms, 100*ms, 1<<20)
	require.Equal(t, uint64(1000), r.budget, "never down")
	require.Equal(t, uint64(1000), r.credit())

	// The room the endpoint leaves bounds the growth, and the growth is
	// reported.
	r = newReceiver(1000, 100, 1000, 16, 16, nil)
	r.landed = 400
	require.Equal(t, uint64(50), r.growBudget(100*ms, 100*ms, 50))
	require.Equal(t, uint64(150), r.budget)
	r.landed = 400
	require.Zero(t, r.growBudget(200*ms, 100*ms, 0), "no room left")
	require.Equal(t, uint64(150), r.budget)
}

// TestEndpointBudgetPool: the connections' budgets grow together by at
// most UnexpectedMax - UnexpectedBytes, and a connection that ends gives
// its growth back.
func TestEndpointBudgetPool(t *testing.T) {
	ms := time.Millisecond
	e := &Endpoint{cfg: Config{UnexpectedBytes: 100, UnexpectedMax: 300}}
	conns := make([]*conn, 3)
	for i := range conns {
		conns[i] = &conn{ep: e, rcv: newReceiver(1000, 100, 300, 16, 16, nil), paths: []*path{{rtt: newRTT(ms)}}}
		conns[i].rcv.landed = 1000
		e.growBudget(10*ms, conns[i])
	}
	require.Equal(t, uint64(300), conns[0].rcv.budget, "the first reaches UnexpectedMax")
	require.Equal(t, uint64(100), conns[1].rcv.budget, "the pool is spent")
	require.Equal(t, uint64(200), e.budgetGrown)
	e.budgetGrown -= conns[0].budgetGrown // as the connection's end does
	conns[1].rcv.landed = 1000
	e.growBudget(20*ms, conns[1])
	require.Equal(t, uint64(300), conns[1].rcv.budget)
}
