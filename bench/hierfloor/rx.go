package main

import (
	"errors"
	"syscall"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/udpio"
)

// readCoalesced is the reader of -rxwait: the rank's receiving sockets
// are unpolled (an arrival wakes nobody), and one goroutine waits until
// any of them has a datagram, sleeps wait more for others to join it,
// and reads every socket until it is empty; so a paced WAN stream's
// datagrams, which the kernel cannot merge (GRO) as they come one by one,
// are read many a wake-up instead of one. It ends when the poller is
// closed.
func (in *inbox) readCoalesced(p *udpio.Poller, socks []*udpio.Socket, wait time.Duration) {
	trs := make([]*udpio.TryReader, len(socks))
	for i, s := range socks {
		trs[i] = udpio.NewTryReader(s, 16)
	}
	ms := make([]udpio.Message, 16)
	for i := range ms {
		ms[i].Buf = make([]byte, udpio.ReadBufferSize)
	}
	for {
		if err := p.Wait(100 * time.Millisecond); err != nil {
			return
		}
		pause(wait)
		for i, tr := range trs {
			for {
				k, err := tr.ReadBatch(ms)
				if errors.Is(err, syscall.ECONNREFUSED) {
					_, _, _ = socks[i].DrainErrors(nil)
					in.refused.Add(1)
					continue
				}
				if err != nil && k == 0 {
					break // closed: the next Wait says so
				}
				in.takeAll(ms[:k])
				if k < len(ms) {
					break
				}
			}
		}
	}
}
