package collective

import (
	"testing"

	"github.com/gocoll/gocoll/transport"
)

// upHost is a transport.BoardHost whose every rank is up; read asks it
// nothing else.
type upHost struct{ transport.BoardHost }

func (upHost) Down(int) error { return nil }

// TestRetiredBoardPeerBoardReused: a retired board waits for the members'
// acks of what this rank wrote, but a member whose board holds another
// communicator's id now (it closed this one and its board was claimed
// again: acks cleared to 0) has done reading.
func TestRetiredBoardPeerBoardReused(t *testing.T) {
	const id = 7
	peer := make([]byte, boardCtrlBytes)
	word(peer, 0).Store(id)
	r := retiredBoard{id: id, host: upHost{}, peers: [][]byte{nil, peer}, ranks: []int{0, 1}}
	r.peers[0] = make([]byte, boardCtrlBytes) // this rank's own: acks ^0 (closed)
	for s := range boardSlots {
		word(r.peers[0], boardOffAcks+8*s).Store(^uint64(0))
	}
	r.written[1] = 6 // call #5, in slot 1
	if r.read() {
		t.Fatalf("read before the member acked call #5 of slot 1")
	}
	word(peer, boardOffAcks+8).Store(6)
	if !r.read() {
		t.Fatalf("not read after the member acked it")
	}
	word(peer, boardOffAcks+8).Store(0)
	word(peer, 0).Store(8) // the member's board is communicator 8's now
	if !r.read() {
		t.Fatalf("still waiting on a member's board another communicator claimed")
	}
}
