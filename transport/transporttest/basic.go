package transporttest

import (
	"testing"

	"github.com/gocoll/gocoll/transport"
)

func testRankSize(t *testing.T, newWorld WorldFactory) {
	for _, size := range []int{1, 3} {
		eps := newWorld(t, size)
		if len(eps) != size {
			t.Fatalf("factory built %d endpoints, want %d", len(eps), size)
		}
		for i, ep := range eps {
			if ep.Rank() != i || ep.Size() != size {
				t.Fatalf("endpoint %d: Rank()=%d Size()=%d, want %d and %d", i, ep.Rank(), ep.Size(), i, size)
			}
		}
	}
}

// testAllPairs sends one message between every ordered pair of ranks,
// including each rank to itself, with every receive posted first.
func testAllPairs(t *testing.T, newWorld WorldFactory) {
	const size, n = 3, 1000
	eps := newWorld(t, size)
	bufs := make([][]byte, size*size)
	recvs := make([]transport.Request, size*size)
	for dst := range size {
		for src := range size {
			i := src*size + dst
			bufs[i] = make([]byte, n)
			recvs[i] = eps[dst].Recv(src, tag(1, 0), bufs[i])
		}
	}
	sends := make([]transport.Request, 0, size*size)
	for src := range size {
		for dst := range size {
			sends = append(sends, eps[src].Send(dst, tag(1, 0), Pattern(n, uint64(src*size+dst))))
		}
	}
	for i, r := range recvs {
		waitOK(t, r, n, "receive")
		checkData(t, bufs[i], uint64(i), "pair message")
	}
	for _, s := range sends {
		waitOK(t, s, n, "send")
	}
}

// fifoSizes mixes small and large messages, so that a transport that sends
// them by different protocols must still keep their order.
var fifoSizes = []int{10, 300 << 10, 0, 1, 64 << 10, 1 << 20, 7, 65 << 10}

// testFIFOSameTag checks that messages with one (source, tag) are matched in
// the order sent, with the receives posted both after and before the sends.
func testFIFOSameTag(t *testing.T, newWorld WorldFactory) {
	eps := newWorld(t, 2)
	for _, recvFirst := range []bool{false, true} {
		op := uint64(1)
		if recvFirst {
			op = 2
		}
		var sends, recvs []transport.Request
		bufs := make([][]byte, len(fifoSizes))
		postRecvs := func() {
			for i, n := range fifoSizes {
				bufs[i] = make([]byte, n)
				recvs = append(recvs, eps[1].Recv(0, tag(op, 0), bufs[i]))
			}
		}
		if recvFirst {
			postRecvs()
		}
		for i, n := range fifoSizes {
			sends = append(sends, eps[0].Send(1, tag(op, 0), Pattern(n, uint64(i))))
		}
		if !recvFirst {
			postRecvs()
		}
		for i, r := range recvs {
			waitOK(t, r, fifoSizes[i], "in-order receive")
			checkData(t, bufs[i], uint64(i), "in-order receive")
		}
		for i, s := range sends {
			waitOK(t, s, fifoSizes[i], "send")
		}
	}
}

// testTagsIndependent checks that a message for one tag never waits for
// another tag: neither for an unposted message nor for an unmatched one.
func testTagsIndependent(t *testing.T, newWorld WorldFactory) {
	eps := newWorld(t, 2)
	a, b := tag(1, 0), tag(1, 1)

	// A receive for b completes while a receive for a has no message yet.
	bufA, bufB := make([]byte, 64), make([]byte, 64)
	recvA := eps[1].Recv(0, a, bufA)
	recvB := eps[1].Recv(0, b, bufB)
	sendB := eps[0].Send(1, b, Pattern(64, 2))
	waitOK(t, recvB, 64, "receive for tag B")
	checkData(t, bufB, 2, "tag B")
	requirePending(t, recvA, "receive for tag A with no message")
	sendA := eps[0].Send(1, a, Pattern(64, 1))
	waitOK(t, recvA, 64, "receive for tag A")
	checkData(t, bufA, 1, "tag A")
	waitOK(t, sendA, 64, "send A")
	waitOK(t, sendB, 64, "send B")

	// Messages for a (one large, one small) sent first and not yet received
	// do not hold back a later message for b.
	large := 2 << 20
	s1 := eps[0].Send(1, a, Pattern(large, 3))
	s2 := eps[0].Send(1, a, Pattern(10, 4))
	s3 := eps[0].Send(1, b, Pattern(10, 5))
	buf := make([]byte, 10)
	waitOK(t, eps[1].Recv(0, b, buf), 10, "receive for tag B behind unmatched tag A")
	checkData(t, buf, 5, "tag B")
	big := make([]byte, large)
	waitOK(t, eps[1].Recv(0, a, big), large, "large message for tag A")
	checkData(t, big, 3, "large tag A")
	waitOK(t, eps[1].Recv(0, a, buf), 10, "small message for tag A")
	checkData(t, buf, 4, "small tag A")
	for _, s := range []transport.Request{s1, s2, s3} {
		if _, err := wait(t, s, "send"); err != nil {
			t.Fatalf("send: %v", err)
		}
	}

	// Tags that differ only in their operation are different tags.
	s4 := eps[0].Send(1, tag(7, 0), Pattern(8, 7))
	s5 := eps[0].Send(1, tag(8, 0), Pattern(8, 8))
	waitOK(t, eps[1].Recv(0, tag(8, 0), buf[:8]), 8, "receive op 8")
	checkData(t, buf[:8], 8, "op 8")
	waitOK(t, eps[1].Recv(0, tag(7, 0), buf[:8]), 8, "receive op 7")
	checkData(t, buf[:8], 7, "op 7")
	waitOK(t, s4, 8, "send op 7")
	waitOK(t, s5, 8, "send op 8")
}

// testRecvAfterArrival posts a receive only after its message has surely
// arrived: the sender sends it and then a marker on another tag, and the
// receiver posts the first receive after the marker's has completed.
func testRecvAfterArrival(t *testing.T, newWorld WorldFactory) {
	eps := newWorld(t, 2)
	for i, n := range []int{100, 1 << 20} {
		data, marker := tag(uint64(10+i), 0), tag(uint64(10+i), 1)
		sData := eps[0].Send(1, data, Pattern(n, 1))
		sMark := eps[0].Send(1, marker, Pattern(4, 2))
		mbuf := make([]byte, 4)
		waitOK(t, eps[1].Recv(0, marker, mbuf), 4, "marker")
		buf := make([]byte, n)
		waitOK(t, eps[1].Recv(0, data, buf), n, "receive posted after arrival")
		checkData(t, buf, 1, "late-posted receive")
		waitOK(t, sData, n, "send")
		waitOK(t, sMark, 4, "marker send")
	}
	// The same from oneself.
	s := eps[0].Send(0, tag(20, 0), Pattern(100, 3))
	buf := make([]byte, 100)
	waitOK(t, eps[0].Recv(0, tag(20, 0), buf), 100, "self receive posted after send")
	checkData(t, buf, 3, "self message")
	waitOK(t, s, 100, "self send")
}

func testZeroBytes(t *testing.T, newWorld WorldFactory) {
	eps := newWorld(t, 2)
	for _, dst := range []int{1, 0} {
		s1 := eps[0].Send(dst, tag(1, 0), nil)
		s2 := eps[0].Send(dst, tag(1, 0), []byte{})
		waitOK(t, eps[dst].Recv(0, tag(1, 0), nil), 0, "0-byte message into nil buffer")
		buf := Pattern(16, 9)
		waitOK(t, eps[dst].Recv(0, tag(1, 0), buf), 0, "0-byte message into 16-byte buffer")
		checkData(t, buf, 9, "buffer after 0-byte message")
		waitOK(t, s1, 0, "0-byte send")
		waitOK(t, s2, 0, "0-byte send")
	}
}

// testLarge moves LargeBytes messages both ways between two ranks at once
// and from a rank to itself.
func testLarge(t *testing.T, newWorld WorldFactory) {
	eps := newWorld(t, 2)
	type flow struct{ src, dst int }
	flows := []flow{{0, 1}, {1, 0}, {0, 0}}
	bufs := make([][]byte, len(flows))
	var recvs, sends []transport.Request
	for i, f := range flows {
		bufs[i] = make([]byte, LargeBytes)
		recvs = append(recvs, eps[f.dst].Recv(f.src, tag(1, 0), bufs[i]))
	}
	for i, f := range flows {
		sends = append(sends, eps[f.src].Send(f.dst, tag(1, 0), Pattern(LargeBytes, uint64(i))))
	}
	for i := range flows {
		waitOK(t, recvs[i], LargeBytes, "large receive")
		checkData(t, bufs[i], uint64(i), "large message")
		waitOK(t, sends[i], LargeBytes, "large send")
	}
}

// testShorterMessage checks that a message shorter than the buffer completes
// the receive with the message's length.
func testShorterMessage(t *testing.T, newWorld WorldFactory) {
	eps := newWorld(t, 2)
	for i, sz := range [][2]int{{1000, 4096}, {1<<20 + 3, 2 << 20}} {
		msg, bufLen := sz[0], sz[1]
		buf := make([]byte, bufLen)
		r := eps[1].Recv(0, tag(1, uint32(i)), buf)
		s := eps[0].Send(1, tag(1, uint32(i)), Pattern(msg, uint64(i)))
		waitOK(t, r, msg, "receive of a shorter message")
		checkData(t, buf[:msg], uint64(i), "shorter message")
		waitOK(t, s, msg, "send")
	}
}

// testTruncated checks that a message longer than the buffer fails the
// receive with ErrTruncated, that the send still completes, and that the
// next message on the same tag arrives intact.
func testTruncated(t *testing.T, newWorld WorldFactory) {
	eps := newWorld(t, 2)
	for i, sz := range [][2]int{{1000, 100}, {2 << 20, 1 << 20}} {
		msg, bufLen := sz[0], sz[1]
		tg := tag(uint64(i+1), 0)
		s := eps[0].Send(1, tg, Pattern(msg, 1))
		waitFail(t, eps[1].Recv(0, tg, make([]byte, bufLen)), "receive into a short buffer", isErr(transport.ErrTruncated))
		// The send's outcome is the transport's choice, but it must finish.
		_, _ = wait(t, s, "send of a truncated message")

		s2 := eps[0].Send(1, tg, Pattern(50, 2))
		buf := make([]byte, 50)
		waitOK(t, eps[1].Recv(0, tg, buf), 50, "receive after a truncated one")
		checkData(t, buf, 2, "message after a truncated one")
		waitOK(t, s2, 50, "send")
	}
}
