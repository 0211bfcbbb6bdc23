package collective

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gocoll/gocoll/transport"
)

// boardPeerFailed is the error of a call that member peer failed, with
// the reason it wrote on its board; a communicator abort in it is relayed
// (untrack) as from any other peer.
func (o *operation) boardPeerFailed(peer int, u uint64) error {
	text := failReason(o.c.board.peers[peer], u)
	return o.peerErr(peer, &transport.RemoteAbortError{Rank: o.c.ranks[peer], Op: o.key, Reason: text})
}

// failReason is the reason member mem wrote for its failure of call
// seq+1 u (failedCall), saying so where the text is of a later failure
// (u in its fail-before word: the text is the last failure's).
func failReason(mem []byte, u uint64) string {
	if f := word(mem, boardOffFail).Load(); f != u {
		return fmt.Sprintf("(the reason it wrote is of its later failure, of operation #%d) %s", f-1, boardFailText(mem))
	}
	return boardFailText(mem)
}

// boardFailText is the reason a member wrote on its board m when it last
// failed a call (at most boardTextMax bytes).
func boardFailText(m []byte) string {
	n := min(int(binary.LittleEndian.Uint32(m[boardOffTextN:])), boardTextMax)
	return string(m[boardOffText : boardOffText+n])
}

// setUpMismatch reports whether err is a mismatch with a member that was
// setting the board up (boardReset). (Out of line: its errors.As target
// escapes, which a call that did not fail must not pay for.)
func setUpMismatch(err error) bool {
	var me *MismatchError
	return errors.As(err, &me) && me.setUp
}

// boardFail writes the failure of a board call on this rank's board,
// where the peers that wait on it look (ready), keeping the failure
// before it in the fail-before word (an eager root settling an older
// call looks there too: failedAt).
func (o *operation) boardFail(err error) {
	b := &o.c.board
	m := b.peers[o.c.rank]
	text := err.Error()
	if len(text) > boardTextMax {
		text = text[:boardTextMax]
	}
	copy(m[boardOffText:], text)
	binary.LittleEndian.PutUint32(m[boardOffTextN:], uint32(len(text)))
	if f := word(m, boardOffFail).Load(); f != o.key.Op+1 {
		word(m, boardOffFailB4).Store(f) // first: failedAt
	}
	word(m, boardOffFail).Store(o.key.Op + 1)
	b.ringBell(o.c.rank, ^uint64(0))
}

// failedCall reports whether member mem failed call seq+1 u, by its fail
// word or its fail-before word (boardFail): a later failure of the member
// moves the earlier one there, so a peer that looks late (a check of a
// call the member failed without writing it, then failed a later one
// after writing that in the same slot) still finds it, not a slot
// holding a later call (a broken board) or no word at all (a wait to the
// deadline): TestBoardEagerCheckSeesOverwrittenFailure.
// A member that never failed (fail word 0) has no fail-before either:
// one load, as before the word was kept.
func failedCall(mem []byte, u uint64) bool {
	f := word(mem, boardOffFail).Load()
	return f == u || f != 0 && word(mem, boardOffFailB4).Load() == u
}
