package simfabric

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testNet is a fabric plus test helpers that fail the test on error.
type testNet struct {
	t *testing.T
	*Fabric
	log []Delivery
}

func newTestNet(t *testing.T, cfg Config) *testNet {
	t.Helper()
	f, err := New(cfg)
	require.NoError(t, err)
	return &testNet{t: t, Fabric: f}
}

func (n *testNet) node() NodeID {
	n.t.Helper()
	id, err := n.AddNode()
	require.NoError(n.t, err)
	return id
}

func (n *testNet) link(cfg LinkConfig) LinkID {
	n.t.Helper()
	id, err := n.AddLink(cfg)
	require.NoError(n.t, err)
	return id
}

func (n *testNet) path(from, to NodeID, links ...LinkID) PathID {
	n.t.Helper()
	id, err := n.AddPath(from, to, links...)
	require.NoError(n.t, err)
	return id
}

func (n *testNet) send(p PathID, data []byte) {
	n.t.Helper()
	require.NoError(n.t, n.Send(p, data))
}

// sendSized sends a packet of size bytes whose first bytes hold seq.
func (n *testNet) sendSized(p PathID, seq int, size int) {
	n.t.Helper()
	b := make([]byte, size)
	copy(b, fmt.Sprintf("%08d", seq))
	n.send(p, b)
}

func (n *testNet) schedule(faults ...Fault) {
	n.t.Helper()
	require.NoError(n.t, n.Schedule(faults...))
}

// advance moves to t, appending deliveries to n.log.
func (n *testNet) advance(t time.Duration) {
	n.t.Helper()
	require.NoError(n.t, n.AdvanceTo(t, n.record))
}

// drain advances until nothing is pending.
func (n *testNet) drain() {
	n.t.Helper()
	for {
		next, ok := n.NextEventTime()
		if !ok {
			return
		}
		n.advance(next)
	}
}

func (n *testNet) record(d Delivery) { n.log = append(n.log, d) }

// seqOf reads the sequence number sendSized wrote.
func seqOf(t *testing.T, d Delivery) int {
	t.Helper()
	var s int
	_, err := fmt.Sscanf(string(d.Data[:8]), "%08d", &s)
	require.NoError(t, err)
	return s
}

// arrivals returns the arrival times in the log.
func (n *testNet) arrivals() []time.Duration {
	var ts []time.Duration
	for _, d := range n.log {
		ts = append(ts, d.At)
	}
	return ts
}

// formatLog renders deliveries one per line, for comparing runs.
func formatLog(log []Delivery) string {
	var b strings.Builder
	for _, d := range log {
		fmt.Fprintf(&b, "%v %d->%d p%d ce=%v %x\n", d.At, d.From, d.To, d.Path, d.CE, d.Data)
	}
	return b.String()
}

// requireConserved checks that every link's and path's packets add up and
// that in-flight totals match the fabric's count.
func requireConserved(t *testing.T, f *Fabric) {
	t.Helper()
	s := f.Stats()
	var paths int64
	for i, p := range s.Paths {
		in := p.InFlight()
		require.GreaterOrEqual(t, in.Packets, int64(0), "path %d", i)
		require.GreaterOrEqual(t, in.Bytes, int64(0), "path %d", i)
		paths += in.Packets
	}
	for i, l := range s.Links {
		require.GreaterOrEqual(t, l.InFlight().Packets, int64(0), "link %d", i)
	}
	require.Equal(t, int64(f.InFlight()), paths)
}
