package mrtransport

import (
	"encoding/binary"
	"fmt"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// labFrameOverhead is what the lab's router counters add to a datagram:
// its IPv4 (20), UDP (8) and Ethernet (14) headers.
const labFrameOverhead = 20 + 8 + 14

// wanBytes tallies, per direction between two sites (0: site 0 to site 1),
// the bytes the datagrams crossing the WAN put on its links, by what they
// carry: a SimConfig.Tap for issue 14's WAN/S (the bytes of the WAN's
// busier direction over the AllReduce's bytes) split into its parts.
// site maps a rank to its site (0 or 1).
type wanBytes struct {
	site func(rank int) int
	dir  [2]wanDir
}

// wanDir is one direction's tally, in bytes (counts where named so).
type wanDir struct {
	datagrams  int64
	frames     int64 // labFrameOverhead per datagram
	dataNew    int64 // DATA payload sent for the first time
	dataResent int64 // DATA payload of resends (wire.FlagRetransmit)
	dataHead   int64 // DATA header and CRC (wire.DataOverhead each)
	dataCount  int64
	resentN    int64
	piggy      int64 // ACK bodies carried on DATA (wire.FlagAck)
	piggyN     int64
	ack        int64 // ACK datagrams, whole
	ackN       int64
	probe      int64 // PROBE datagrams
	probeN     int64
	other      int64 // HELLO, HELLO-ACK, CLOSE, unreadable
	// Set after the run: the datagrams the direction's links dropped
	// (and their bytes), and the message bytes the receivers placed
	// for the first time (ConnStats.BytesArrived).
	dropped, droppedBytes, arrived int64
}

// tap is the SimConfig.Tap.
func (w *wanBytes) tap(from, to int, b []byte) {
	sf, st := w.site(from), w.site(to)
	if sf == st || len(b) < wire.MinPacketLen {
		return
	}
	d := &w.dir[sf]
	d.datagrams++
	d.frames += labFrameOverhead
	switch wire.Type(b[1]) {
	case wire.TypeData:
		if len(b) < wire.DataHeadLen+wire.CRCLen {
			d.other += int64(len(b))
			return
		}
		plen := int64(binary.BigEndian.Uint32(b[wire.DataHeadLen-4:]))
		d.dataCount++
		d.dataHead += wire.DataOverhead
		if b[2]&wire.FlagRetransmit != 0 {
			d.dataResent += plen
			d.resentN++
		} else {
			d.dataNew += plen
		}
		if rest := int64(len(b)) - wire.DataOverhead - plen; rest > 0 {
			d.piggy += rest
			d.piggyN++
		}
	case wire.TypeAck:
		d.ack += int64(len(b))
		d.ackN++
	case wire.TypeProbe:
		d.probe += int64(len(b))
		d.probeN++
	default:
		d.other += int64(len(b))
	}
}

// total is the direction's bytes on the links, frames included.
func (d *wanDir) total() int64 {
	return d.frames + d.dataNew + d.dataResent + d.dataHead + d.piggy + d.ack + d.probe + d.other
}

// split describes the direction's bytes as shares of s, the bytes the
// algorithm moves across the WAN in that direction.
func (d *wanDir) split(s float64) string {
	r := func(n int64) float64 { return float64(n) / s }
	return fmt.Sprintf("%.4f = new payload %.4f + resent %.4f (%d) + DATA headers %.4f (%d) + piggybacked ACKs %.4f (%d) + ACK datagrams %.4f (%d, %.0f B each) + probes %.4f (%d) + other %.4f + IP/UDP/Ethernet %.4f",
		r(d.total()), r(d.dataNew), r(d.dataResent), d.resentN, r(d.dataHead), d.dataCount, r(d.piggy), d.piggyN,
		r(d.ack), d.ackN, float64(d.ack)/float64(max(d.ackN, 1)), r(d.probe), d.probeN, r(d.other), r(d.frames)) +
		fmt.Sprintf("; links dropped %d datagrams; payload sent and not dropped beyond the bytes placed (spurious resends): %.4f",
			d.dropped, r(d.dataNew+d.dataResent-(d.droppedBytes-d.dropped*wire.DataOverhead)-d.arrived))
}
