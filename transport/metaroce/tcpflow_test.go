package metaroce_test

import (
	"encoding/binary"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
	"github.com/stretchr/testify/require"
)

// renoFlow is a loss-based competitor on the simulated fabric: a TCP-like
// bulk flow from one node to another (its own nodes, added to the
// fabric), with a window in packets that grows by one per window
// acknowledged (slow start: per packet) and is cut by tcpBeta on three
// duplicate ACKs (NewReno recovery, the window inflated by one per
// duplicate) and to one packet on a timeout (go-back-N), as Linux's
// CUBIC behaves at a few ms of RTT. The receiver acknowledges every
// packet cumulatively, echoing its send time.
type renoFlow struct {
	s              *sim
	src, dst       int
	fwd, rev       simfabric.PathID
	mss            int
	cwnd, ssthresh float64
	una, next      uint64
	dups           int
	recovering     bool
	recover        uint64
	srtt, rttvar   time.Duration
	rtoAt          time.Duration
	backoff        uint
	expected       uint64
	ooo            map[uint64]bool
	delivered      int64 // bytes delivered in order
	cuts, timeouts int64
	buf            []byte
}

// tcpBeta is the window a loss leaves (CUBIC's 0.7).
const tcpBeta = 0.7

// tcpMinRTO is Linux's least retransmission timeout.
const tcpMinRTO = 200 * time.Millisecond

// startReno adds two nodes to s, the flow's sender and receiver, over fwd
// and rev (each a list of links), and starts sending mss-byte packets.
func startReno(s *sim, mss int, fwd, rev []simfabric.LinkID) *renoFlow {
	src, err := s.fab.AddNode()
	require.NoError(s.t, err)
	dst, err := s.fab.AddNode()
	require.NoError(s.t, err)
	f := &renoFlow{s: s, src: int(src), dst: int(dst), mss: mss, cwnd: 10, ssthresh: 1 << 20,
		ooo: map[uint64]bool{}, buf: make([]byte, mss)}
	f.fwd, err = s.fab.AddPath(src, dst, fwd...)
	require.NoError(s.t, err)
	f.rev, err = s.fab.AddPath(dst, src, rev...)
	require.NoError(s.t, err)
	if s.agents == nil {
		s.agents = map[int]simAgent{}
	}
	s.agents[f.src], s.agents[f.dst] = f, f
	s.agentList = append(s.agentList, f)
	f.fill(s.fab.Now())
	return f
}

func (f *renoFlow) rto() time.Duration {
	r := tcpMinRTO
	if f.srtt > 0 {
		r = max(r, f.srtt+4*f.rttvar)
	}
	return min(r<<f.backoff, 60*time.Second)
}

// send puts packet seq on the wire at now.
func (f *renoFlow) send(seq uint64, now time.Duration) {
	binary.LittleEndian.PutUint64(f.buf[0:], seq)
	binary.LittleEndian.PutUint64(f.buf[8:], uint64(now))
	require.NoError(f.s.t, f.s.fab.Send(f.fwd, f.buf[:f.mss]))
	if f.rtoAt == 0 {
		f.rtoAt = now + f.rto()
	}
}

// fill sends new packets while the window allows.
func (f *renoFlow) fill(now time.Duration) {
	wnd := f.cwnd
	if f.recovering {
		wnd += float64(f.dups)
	}
	for float64(f.next-f.una) < wnd {
		f.send(f.next, now)
		f.next++
	}
}

func (f *renoFlow) deliver(d simfabric.Delivery) {
	seq := binary.LittleEndian.Uint64(d.Data[0:])
	stamp := binary.LittleEndian.Uint64(d.Data[8:])
	if int(d.To) == f.dst {
		switch {
		case seq == f.expected:
			f.expected++
			f.delivered += int64(f.mss)
			for f.ooo[f.expected] {
				delete(f.ooo, f.expected)
				f.expected++
				f.delivered += int64(f.mss)
			}
		case seq > f.expected:
			f.ooo[seq] = true
		}
		var ack [64]byte
		binary.LittleEndian.PutUint64(ack[0:], f.expected)
		binary.LittleEndian.PutUint64(ack[8:], stamp)
		require.NoError(f.s.t, f.s.fab.Send(f.rev, ack[:]))
		return
	}
	f.onAck(seq, time.Duration(stamp), d.At)
}

func (f *renoFlow) onAck(cum uint64, echo, now time.Duration) {
	if r := now - echo; r > 0 {
		if f.srtt == 0 {
			f.srtt, f.rttvar = r, r/2
		} else {
			dev := f.srtt - r
			if dev < 0 {
				dev = -dev
			}
			f.rttvar = (3*f.rttvar + dev) / 4
			f.srtt = (7*f.srtt + r) / 8
		}
	}
	switch {
	case cum > f.una:
		newly := float64(cum - f.una)
		f.una, f.backoff = cum, 0
		if f.recovering {
			if f.una >= f.recover {
				f.recovering, f.cwnd, f.dups = false, f.ssthresh, 0
			} else {
				f.dups = 0
				f.send(f.una, now) // NewReno: a partial ACK resends the next hole
			}
		} else {
			f.dups = 0
			if f.cwnd < f.ssthresh {
				f.cwnd += newly
			} else {
				f.cwnd += newly / f.cwnd
			}
		}
		f.rtoAt = 0
		if f.una < f.next {
			f.rtoAt = now + f.rto()
		}
	case cum == f.una && f.una < f.next:
		f.dups++
		if f.dups == 3 && !f.recovering {
			f.ssthresh = max(f.cwnd*tcpBeta, 2)
			f.cwnd = f.ssthresh
			f.recovering, f.recover = true, f.next
			f.cuts++
			f.send(f.una, now)
		}
	}
	f.fill(now)
}

func (f *renoFlow) nextTimeout() (time.Duration, bool) { return f.rtoAt, f.rtoAt != 0 }

func (f *renoFlow) timeout(now time.Duration) {
	f.timeouts++
	f.ssthresh = max(f.cwnd*tcpBeta, 2)
	f.cwnd, f.dups, f.recovering = 1, 0, false
	f.next = f.una
	f.backoff = min(f.backoff+1, 6)
	f.rtoAt = 0
	f.fill(now)
}
