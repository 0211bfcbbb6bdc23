package main

import (
	"net/netip"

	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
	"github.com/gocoll/gocoll/transport/metaroce/udpio"
)

// Datagram sizes: MTU 9000 less the IPv4 and UDP headers, less ours.
const (
	datagramLen = 9000 - 20 - 8
	payloadLen  = datagramLen - HeaderLen
	trainLen    = udpio.MaxPayload / datagramLen // datagrams a GSO train: 7
)

// newRank opens the rank's sockets (LAN: one, to and from its LAN peer;
// WAN: -paths to receive on and -paths to send from), starts a reader on
// each socket it receives on, and makes its buffers.
func newRank(o opts, phases []Phase) (*rank, error) {
	addrs, err := rankAddrs(o.hosts)
	if err != nil {
		return nil, err
	}
	sports, err := parsePorts(o.sports, o.paths)
	if err != nil {
		return nil, err
	}
	sum, err := reduce.Lookup(dtype.Float32, reduce.Sum)
	if err != nil {
		return nil, err
	}
	half := o.size / RanksPerHost
	r := &rank{o: o, phases: phases, sum: sum, out: map[int]*outlet{},
		buf: make([]byte, o.size), shm: make([]byte, half), peer: make([]byte, half)}
	r.in = newInbox(phases, o.warmup+o.calls, o.pieces, r.buf, sum)
	cfg := udpio.Config{ReadBuffer: o.rbuf, WriteBuffer: o.rbuf, DisableGSO: !o.gso, DisableGRO: !o.gso,
		DisableECN: true, DisableTimestamps: true}
	me, local := addrs[o.rank], o.rank%RanksPerHost
	lanPort := uint16(o.port + 10*local)
	wanPort := func(j int) uint16 { return uint16(o.port + 100 + 10*local + j) }
	var rx []*udpio.Socket // the sockets received on
	open := func(port uint16, receives bool) (*udpio.Socket, error) {
		c := cfg
		c.Unpolled = o.rxWait > 0 && receives
		s, err := udpio.Listen(netip.AddrPortFrom(me, port), c)
		if err == nil {
			r.closed = append(r.closed, s)
		}
		return s, err
	}
	type link struct {
		socks []*udpio.Socket
		dsts  []netip.AddrPort
		rate  float64
	}
	links := map[int]link{} // by peer
	for i, p := range phases {
		if p.Kind == KindMem {
			continue
		}
		if l, ok := links[p.Peer]; ok { // an outlet of its own (its scratch), the same sockets
			r.out[i] = newOutlet(l.socks, l.dsts, payloadLen, o.trainOf(p.Kind), l.rate, trainLen*datagramLen, &r.in.refused)
			continue
		}
		var socks []*udpio.Socket
		var dsts []netip.AddrPort
		rate := o.lanRate
		if p.Kind == KindLAN {
			s, err := open(lanPort, true)
			if err != nil {
				r.close()
				return nil, err
			}
			rx = append(rx, s)
			socks, dsts = []*udpio.Socket{s}, []netip.AddrPort{netip.AddrPortFrom(addrs[p.Peer], lanPort)}
		} else {
			rate = o.wanRate
			for j := range o.paths {
				rs, err := open(wanPort(j), true)
				if err != nil {
					r.close()
					return nil, err
				}
				rx = append(rx, rs)
				s, err := open(sports[j], false)
				if err != nil {
					r.close()
					return nil, err
				}
				socks, dsts = append(socks, s), append(dsts, netip.AddrPortFrom(addrs[p.Peer], wanPort(j)))
			}
		}
		links[p.Peer] = link{socks, dsts, rate}
		r.out[i] = newOutlet(socks, dsts, payloadLen, o.trainOf(p.Kind), rate, trainLen*datagramLen, &r.in.refused)
	}
	if err := r.startReaders(rx); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// startReaders starts a reader on each socket of rx, or with -rxwait one
// coalescing reader for all of them.
func (r *rank) startReaders(rx []*udpio.Socket) error {
	if r.o.rxWait <= 0 {
		for _, s := range rx {
			go r.in.read(s)
		}
		return nil
	}
	p, err := udpio.NewPoller(rx)
	if err != nil {
		return err
	}
	r.poller = p
	go r.in.readCoalesced(p, rx, r.o.rxWait)
	return nil
}

// close closes every socket and the poller (ending the readers).
func (r *rank) close() {
	if r.poller != nil {
		_ = r.poller.Close()
	}
	for _, s := range r.closed {
		_ = s.Close()
	}
	r.closed = nil
}
