package metaroce

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestQueuedResendsLeaveOutTakenBack: a resend that a late ACK took back
// (packetLateAcked) no longer counts as waiting to be resent
// (ConnStats.RetransmitQueue), though it stays in the queue until
// nextPiece skips it.
func TestQueuedResendsLeaveOutTakenBack(t *testing.T) {
	s := newSender(10, 4, 1<<20, 16, func(*outMsg, error) {})
	m := &outMsg{seq: 1, size: 30, next: 30, allSent: true, started: true, pending: 3}
	s.msgs[1] = m
	for off := range uint64(3) {
		s.packetLost(&sentPacket{msgSeq: 1, offset: 10 * off, length: 10})
	}
	require.Equal(t, 3, s.queuedResends())
	require.True(t, s.packetLateAcked(&sentPacket{msgSeq: 1, offset: 10, length: 10}))
	require.Equal(t, 2, s.queuedResends(), "one of three taken back")
	pc, ok := s.nextPiece()
	require.True(t, ok)
	require.Equal(t, uint64(0), pc.offset)
	require.Equal(t, 1, s.queuedResends())
	pc, ok = s.nextPiece() // skips the one taken back
	require.True(t, ok)
	require.Equal(t, uint64(20), pc.offset)
	require.Equal(t, 0, s.queuedResends())
}
