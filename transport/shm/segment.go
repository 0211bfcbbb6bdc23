//go:build linux

package shm

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Segment layout: a header page, one ring per sending rank, the table of
// rendezvous send words, then, from the next page on, the boards
// (board.go).
const (
	segMagic       = 0x3248536c6c6f6367 // "gcollSH2", little endian (SH1 had FIN slots)
	segHeaderBytes = 4096
	ringHeadBytes  = 128 // head and tail, each on its own cache line

	offMagic     = 0
	offNonce     = 8
	offSize      = 16
	offRank      = 20
	offSlots     = 24
	offSendWords = 28
	offBase      = 32 // the owner's address of its own mapping (see peer.nonceAddr)
	offBoards    = 40
	offBoardSize = 44
	offSleeping  = 64
	offSpinners  = 128
	offCopied    = 192
	offCPU       = 256 // balance.go
	offTID       = 264
)

// Send word states (the low sendStateBits bits); the upper bits hold the
// word's generation, so a slot naming an older use of the word cannot
// claim the new one. A send moves from posted to claimed (its receiver
// copies it) and then copied (the copy ended: the send completes), or from
// posted to cancelled.
const (
	sendFree uint64 = iota
	sendPosted
	sendClaimed
	sendCancelled
	sendCopied

	sendStateBits = 3
)

// sendWordValue is the send word of generation gen in state state.
func sendWordValue(gen, state uint64) uint64 { return gen<<sendStateBits | state }

// segment is one rank's shared memory, mapped by its owner and by every
// peer. The owner consumes the rings; peers produce into them and claim
// words of the send table.
type segment struct {
	mem        []byte
	size       int // rings
	slots      int // per ring
	sendWords  int
	boards     int
	boardBytes int
	retire     bool // boards were handed out: unmap leaves zeroed memory in place (board.go)
}

// boardsOffset is where the boards begin: the page after the send words.
func boardsOffset(size, slots, sendWords int) int {
	n := segHeaderBytes + size*(ringHeadBytes+slots*SlotBytes) + sendWords*8
	return (n + 4095) &^ 4095
}

func segmentBytes(size, slots, sendWords, boards, boardBytes int) int {
	return boardsOffset(size, slots, sendWords) + boards*boardBytes
}

// createSegment makes and maps a new memfd segment and returns it with the
// memfd.
func createSegment(cfg Config, nonce uint64) (*segment, int, error) {
	fd, err := unix.MemfdCreate("gocoll-shm", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, -1, fmt.Errorf("shm: memfd_create: %w", err)
	}
	n := segmentBytes(cfg.Size, cfg.RingSlots, cfg.MaxPendingSends, cfg.Boards, cfg.BoardBytes)
	if err := unix.Ftruncate(fd, int64(n)); err != nil {
		unix.Close(fd)
		return nil, -1, fmt.Errorf("shm: sizing a %d-byte segment: %w", n, err)
	}
	s, err := mapSegment(fd, n)
	if err != nil {
		unix.Close(fd)
		return nil, -1, err
	}
	h := s.mem
	binary.LittleEndian.PutUint64(h[offNonce:], nonce)
	binary.LittleEndian.PutUint64(h[offBase:], uint64(uintptr(unsafe.Pointer(&h[0]))))
	binary.LittleEndian.PutUint32(h[offSize:], uint32(cfg.Size))
	binary.LittleEndian.PutUint32(h[offRank:], uint32(cfg.Rank))
	binary.LittleEndian.PutUint32(h[offSlots:], uint32(cfg.RingSlots))
	binary.LittleEndian.PutUint32(h[offSendWords:], uint32(cfg.MaxPendingSends))
	binary.LittleEndian.PutUint32(h[offBoards:], uint32(cfg.Boards))
	binary.LittleEndian.PutUint32(h[offBoardSize:], uint32(cfg.BoardBytes))
	s.word64(offMagic).Store(segMagic)
	s.size, s.slots, s.sendWords = cfg.Size, cfg.RingSlots, cfg.MaxPendingSends
	s.boards, s.boardBytes = cfg.Boards, cfg.BoardBytes
	return s, fd, nil
}

func mapSegment(fd, n int) (*segment, error) {
	mem, err := unix.Mmap(fd, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("shm: mapping a %d-byte segment: %w", n, err)
	}
	return &segment{mem: mem}, nil
}

// openSegment maps a peer's segment from its memfd (already taken into this
// process) and checks that it is the one its address promised, for a world
// of size ranks where the peer is rank.
func openSegment(fd int, a Addr, size, rank int) (*segment, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("shm: rank %d's segment: %w", rank, err)
	}
	if st.Size < segHeaderBytes || st.Size > 1<<36 {
		return nil, fmt.Errorf("shm: rank %d's segment has %d bytes", rank, st.Size)
	}
	s, err := mapSegment(fd, int(st.Size))
	if err != nil {
		return nil, err
	}
	h := s.mem
	s.size = int(binary.LittleEndian.Uint32(h[offSize:]))
	s.slots = int(binary.LittleEndian.Uint32(h[offSlots:]))
	s.sendWords = int(binary.LittleEndian.Uint32(h[offSendWords:]))
	s.boards = int(binary.LittleEndian.Uint32(h[offBoards:]))
	s.boardBytes = int(binary.LittleEndian.Uint32(h[offBoardSize:]))
	switch {
	case s.word64(offMagic).Load() != segMagic || binary.LittleEndian.Uint64(h[offNonce:]) != a.Nonce:
		err = fmt.Errorf("shm: rank %d's descriptor %d is not its segment (another PID namespace?)", rank, a.MemFD)
	case s.size != size || int(binary.LittleEndian.Uint32(h[offRank:])) != rank:
		err = fmt.Errorf("shm: rank %d's segment is for rank %d of %d, want rank %d of %d",
			rank, binary.LittleEndian.Uint32(h[offRank:]), s.size, rank, size)
	case s.slots < 16 || s.slots > MaxRingSlots || s.slots&(s.slots-1) != 0 ||
		s.sendWords < 1 || s.sendWords > MaxPendingSendsLimit ||
		s.boards < 0 || s.boards > MaxBoards || s.boardBytes%4096 != 0 ||
		s.boards > 0 && (s.boardBytes < MinBoardBytes || s.boardBytes > MaxBoardBytes) ||
		segmentBytes(s.size, s.slots, s.sendWords, s.boards, s.boardBytes) != int(st.Size):
		err = fmt.Errorf("shm: rank %d's segment layout does not add up", rank)
	}
	if err != nil {
		s.unmap()
		return nil, err
	}
	return s, nil
}

func (s *segment) unmap() {
	if s.mem == nil {
		return
	}
	if s.retire {
		// A communicator may still hold a board's memory: leave zeroed
		// private pages at the same addresses, so that its late reads
		// and writes fault nowhere; the shared pages are freed.
		_, err := unix.MmapPtr(-1, 0, unsafe.Pointer(&s.mem[0]), uintptr(len(s.mem)),
			unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED)
		if err == nil {
			s.mem = nil
			return
		}
	}
	_ = unix.Munmap(s.mem)
	s.mem = nil
}

// board returns board i of the segment, or nil if it has none such.
func (s *segment) board(i int) []byte {
	if i < 0 || i >= s.boards || s.mem == nil {
		return nil
	}
	off := boardsOffset(s.size, s.slots, s.sendWords) + i*s.boardBytes
	return s.mem[off : off+s.boardBytes : off+s.boardBytes]
}

func (s *segment) word64(off int) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&s.mem[off]))
}

func (s *segment) word32(off int) *atomic.Uint32 {
	return (*atomic.Uint32)(unsafe.Pointer(&s.mem[off]))
}

// sleeping is set by the owner while it waits on its doorbell.
func (s *segment) sleeping() *atomic.Uint32 { return s.word32(offSleeping) }

// spinners counts the owner's Waits that poll the rings themselves; while
// it is not zero, producers need not ring the doorbell.
func (s *segment) spinners() *atomic.Int32 {
	return (*atomic.Int32)(unsafe.Pointer(&s.mem[offSpinners]))
}

// copiedCount counts the sends of the owner that their receivers have
// moved to copied; the owner looks at its send words again when it grows.
func (s *segment) copiedCount() *atomic.Uint64 { return s.word64(offCopied) }

// ring returns the inbound ring from rank src.
func (s *segment) ring(src int) ring {
	off := segHeaderBytes + src*(ringHeadBytes+s.slots*SlotBytes)
	return ring{
		head:  s.word64(off),
		tail:  s.word64(off + 64),
		slots: s.mem[off+ringHeadBytes : off+ringHeadBytes+s.slots*SlotBytes],
		mask:  uint64(s.slots - 1),
	}
}

// sendWord returns word i of the send table.
func (s *segment) sendWord(i int) *atomic.Uint64 {
	off := segHeaderBytes + s.size*(ringHeadBytes+s.slots*SlotBytes) + i*8
	return s.word64(off)
}

// ring is a single-producer, single-consumer queue of slots in shared
// memory. head and tail count slots ever consumed and produced.
type ring struct {
	head, tail *atomic.Uint64
	slots      []byte
	mask       uint64
}

// put writes s into the next free slots (more than one for a long inline
// message) and publishes them at once; it reports false if they do not
// fit. Only one goroutine of one process may put into a ring at a time.
func (r ring) put(s *slot) bool {
	n := uint64(s.slots())
	t := r.tail.Load()
	if t-r.head.Load()+n > r.mask+1 {
		return false
	}
	s.encodeSlots(func(i int) []byte { return r.at(t + uint64(i)) })
	released()
	r.tail.Store(t + n)
	return true
}

// at is slot number k (counted since the ring began) in the ring's memory.
func (r ring) at(k uint64) []byte {
	i := (k & r.mask) * SlotBytes
	return r.slots[i : i+SlotBytes]
}

// gather copies the continuation of the inline message s, whose first slot
// is the oldest unconsumed one, after its first slot's part into buf, and
// returns the whole message; it fails if the producer published too few
// slots.
func (r ring) gather(s slot, buf []byte) ([]byte, error) {
	n := contSlots(int(s.length))
	h := r.head.Load()
	if r.tail.Load()-h <= uint64(n) {
		return nil, fmt.Errorf("shm: a %d-byte message without its %d continuation slots", s.length, n)
	}
	msg := buf[:s.length]
	copy(msg, s.inline)
	for i := 1; i <= n; i++ {
		copy(msg[InlineMax+(i-1)*SlotBytes:], r.at(h+uint64(i)))
	}
	return msg, nil
}

// peek returns the oldest unconsumed slot, or ok false if there is none.
// A producer that claims more slots than the ring has is broken: err.
func (r ring) peek() (b []byte, ok bool, err error) {
	h, t := r.head.Load(), r.tail.Load()
	if t == h {
		return nil, false, nil
	}
	if t-h > r.mask+1 {
		return nil, false, fmt.Errorf("shm: ring holds %d slots of %d", t-h, r.mask+1)
	}
	i := (h & r.mask) * SlotBytes
	acquired()
	return r.slots[i : i+SlotBytes], true, nil
}

// pending reports whether the ring holds an unconsumed slot.
func (r ring) pending() bool { return r.tail.Load() != r.head.Load() }

// advance consumes the n slots of the message peek returned.
func (r ring) advance(n int) { r.head.Add(uint64(n)) }
