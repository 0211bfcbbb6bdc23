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

// A reader that gets a datagram or two a read sets up the headers of the
// entries those filled, not the whole batch, before its next read.
func TestReadEachSetsUpFilledEntriesOnly(t *testing.T) {
	const rounds = 200
	a := pingReadEach(t, rounds, func(int) bool { return false })
	a.rmu.Lock()
	reads, sets := a.rd.eachReads, a.rd.eachSets
	a.rmu.Unlock()
	// pingReadEach reads into 4 messages, one datagram arriving at a
	// time: 4 entries at first, then 2 (the filled one and the next) a
	// read; setting up all 4 every time would be 4 a read.
	require.LessOrEqual(t, sets, 4+2*reads, "entries set up for %d reads", reads)
}
