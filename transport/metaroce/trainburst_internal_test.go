package metaroce

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
	"github.com/stretchr/testify/require"
)

// nopSink takes a path's acknowledged and lost packets and does nothing.
type nopSink struct{}

func (nopSink) packetAcked(*sentPacket) {}
func (nopSink) packetLost(*sentPacket)  {}

// trainRun sends rounds trains of k datagrams of size bytes on one path
// in virtual time, each train's datagrams with one SentAt (as sentAtFor
// gives them), over a one-way delay of 2 ms each way and a bottleneck
// that serialises a datagram in ser, behind a queue others keep: queue(i)
// at round i. The receiver (recvPath) acknowledges after the datagram
// i mod k of round i's train and after its last; the next train leaves
// when the last ACK arrives. With tail, each ACK echoes the newest
// arrival's SentAt as it is (before burstEcho). It returns the most the
// path's fabric RTT stood above its minimum (fab.recent - fab.min, what
// the delay cut holds against its target) over the rounds after the
// first ten, and the delay cuts made.
func trainRun(t *testing.T, rounds, k, size int, ser time.Duration, queue func(int) time.Duration, tail bool) (time.Duration, int64) {
	cfg, err := Config{}.withDefaults()
	require.NoError(t, err)
	const oneWay = 2 * time.Millisecond
	p := newPath(0, 1, &cfg, size)
	var r recvPath
	var blk wire.AckBlock
	var most time.Duration
	now := time.Duration(0)
	for i := range rounds {
		sentAt := now
		ackAt := []int{i % k, k - 1}
		for j := range k {
			seq := p.next
			p.onSent(sentPacket{sentAt: sentAt, length: int32(size), size: int32(size)}, now, &cfg)
			arrived := sentAt + oneWay + queue(i) + time.Duration(j+1)*ser
			r.receive(seq, sentAt, arrived, false)
			for _, a := range ackAt {
				if a != j {
					continue
				}
				r.block(0, arrived, &blk)
				if tail {
					blk.Echo = sentAt
				}
				back := arrived + oneWay
				p.onBlock(&blk, arrived, back, back, back, &cfg, nopSink{})
				now = max(now, back)
			}
		}
		if i >= 10 {
			most = max(most, p.fab.recent.value()-p.fab.min)
		}
	}
	return most, p.win.cuts[signalDelay]
}

// TestTrainReadsAsOneBurst shows the receiver reading a train as one
// burst (recvPath.burstEcho): trains of 4 datagrams of 9000 bytes through
// a 25 MB/s bottleneck (360 µs each: the last arrives 1.08 ms after the
// head), ACKed mid-train and at its end. On an uncongested path the
// fabric RTT's rise the delay cut reads stays at none, where echoing each
// datagram as it is (tail) reads the train's own serialisation as a queue
// (720 µs: the recent minimum spans half an RTT, which holds a mid-train
// ACK and the last); behind a queue that others build (up to 8 ms), the head
// still reads it and the delay signal cuts.
func TestTrainReadsAsOneBurst(t *testing.T) {
	const rounds, k, size = 200, 4, 9000
	ser := 360 * time.Microsecond
	none := func(int) time.Duration { return 0 }
	rise, cuts := trainRun(t, rounds, k, size, ser, none, false)
	t.Logf("uncongested, head: rise %v, delay cuts %d", rise, cuts)
	require.Less(t, rise, ser/4, "an uncongested train reads no queue")
	require.Zero(t, cuts, "an uncongested train takes no delay cut")

	rise, _ = trainRun(t, rounds, k, size, ser, none, true)
	t.Logf("uncongested, tail: rise %v", rise)
	require.Greater(t, rise, ser, "echoed as it is, the train reads its own serialisation")

	ramp := func(i int) time.Duration { return min(time.Duration(i)*100*time.Microsecond, 8*time.Millisecond) }
	rise, cuts = trainRun(t, rounds, k, size, ser, ramp, false)
	t.Logf("congested, head: rise %v, delay cuts %d", rise, cuts)
	require.Greater(t, rise, 2*time.Millisecond, "a queue of others' reads as one")
	require.Positive(t, cuts, "a queue of others' cuts the window")
}
