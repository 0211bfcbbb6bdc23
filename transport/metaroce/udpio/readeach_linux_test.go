package udpio

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A reader woken for each datagram reads each with one recvmmsg: after a
// short batch it waits without the read that would find the queue empty (a
// ReadBatch loop makes two reads a datagram here). The bound leaves room
// for a few wake-ups that find nothing, which the runtime may give.
func TestReadEachWaitsWithoutEmptyRead(t *testing.T) {
	const rounds = 200
	a := pingReadEach(t, rounds, func(int) bool { return false })
	a.rmu.Lock()
	reads := a.rd.eachReads
	a.rmu.Unlock()
	require.GreaterOrEqual(t, reads, rounds)
	require.LessOrEqual(t, reads, rounds+rounds/10, "recvmmsg calls for %d datagrams", rounds)
}
