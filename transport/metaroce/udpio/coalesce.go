package udpio

// Coalesce appends to dst the datagrams of src packed into GSO trains, and
// returns the extended dst and the number of bytes of arena it used.
//
// A train is a run of consecutive messages of src that are single datagrams
// (Segment 0, non-empty Buf, no Gather) to the same Addr and of the same Class, all of the first one's
// length except the last, which may be shorter and then ends the run. A
// train holds at most [MaxSegments] datagrams and [MaxPayload] bytes. Each
// output message covers one run of src, in order: a train has Segment set to
// the first datagram's length, a run of one is passed through unchanged (its
// Buf aliases src's), and so are messages of src that are empty or already
// trains. [Message.Segments] tells how many datagrams of src an output
// message covers.
//
// A train's bytes must be contiguous. When a datagram's Buf starts right
// where the previous one's ends, in the same array and within its capacity
// (datagrams built back to back in one buffer), the train is a slice of that
// array and nothing is copied. Otherwise the datagrams are copied into
// arena, back to back from arena[0]; when arena has no room left, the run
// ends there and a new one starts. With a nil arena only datagrams already
// back to back are merged. Coalesce reads src and never writes it.
func Coalesce(dst, src []Message, arena []byte) ([]Message, int) {
	used := 0
	var t train
	for i := range src {
		m := &src[i]
		if t.open() && t.accepts(m) {
			if t.extend(m, arena, &used) {
				continue
			}
		}
		if t.open() {
			dst = append(dst, t.message())
		}
		t.start(m)
	}
	if t.open() {
		dst = append(dst, t.message())
	}
	return dst, used
}

// train is the run Coalesce is building.
type train struct {
	first   *Message // first datagram of the run, nil when none is open
	buf     []byte   // the run's bytes once it has two datagrams
	count   int      // datagrams in the run
	closed  bool     // the last datagram was shorter: nothing may follow
	inArena bool     // buf lies at the end of the used part of arena
}

func (t *train) open() bool { return t.first != nil }

func (t *train) start(m *Message) {
	*t = train{first: m, buf: m.Buf, count: 1}
	if !mergeable(m) {
		t.closed = true
	}
}

// mergeable reports whether m may be part of a train.
func mergeable(m *Message) bool {
	return m.Segment == 0 && len(m.Buf) > 0 && len(m.Gather) == 0
}

// accepts reports whether m may follow the run, size and limits permitting.
func (t *train) accepts(m *Message) bool {
	seg := len(t.first.Buf)
	return !t.closed && mergeable(m) && m.Addr == t.first.Addr && m.Class == t.first.Class &&
		len(m.Buf) <= seg && t.count < MaxSegments &&
		len(t.buf)+len(m.Buf) <= MaxPayload
}

// extend appends m to the run, in place when m's bytes follow the run's in
// one array, else by copying into arena. It reports false when neither
// works.
func (t *train) extend(m *Message, arena []byte, used *int) bool {
	switch {
	case adjacent(t.buf, m.Buf):
		t.buf = t.buf[:len(t.buf)+len(m.Buf)]
	case t.inArena && *used+len(m.Buf) <= len(arena):
		copy(arena[*used:], m.Buf)
		*used += len(m.Buf)
		t.buf = arena[*used-len(t.buf)-len(m.Buf) : *used]
	case !t.inArena && *used+len(t.buf)+len(m.Buf) <= len(arena):
		start := *used
		n := copy(arena[start:], t.buf)
		n += copy(arena[start+n:], m.Buf)
		*used += n
		t.buf = arena[start:*used]
		t.inArena = true
	default:
		return false
	}
	t.count++
	if len(m.Buf) < len(t.first.Buf) {
		t.closed = true
	}
	return true
}

// adjacent reports whether b starts right where a ends, within a's
// capacity: then a[:len(a)+len(b)] covers both.
func adjacent(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 || cap(a)-len(a) < len(b) {
		return false
	}
	return &a[:len(a)+1][len(a)] == &b[0]
}

// message returns the output message of the run.
func (t *train) message() Message {
	if t.count == 1 {
		return *t.first
	}
	return Message{Buf: t.buf, Addr: t.first.Addr, Segment: len(t.first.Buf), Class: t.first.Class}
}
