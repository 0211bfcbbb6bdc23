package metaroce

import (
	"fmt"
	"time"
)

// ConnectDatagram is Connect with a lower limit on the connection's
// datagrams: the HELLO offers maxDatagram instead of Config.MaxDatagram,
// so both sides send datagrams of at most min(maxDatagram, the peer's
// offer). A driver uses it when it knows the route to the peer carries
// smaller packets than the endpoint accepts (its path MTU). maxDatagram
// must be in [wire.MinDatagram, Config.MaxDatagram].
func (e *Endpoint) ConnectDatagram(now time.Duration, peer uint64, maxDatagram int) (ConnID, error) {
	if maxDatagram < minDatagram || maxDatagram > e.cfg.MaxDatagram {
		return 0, fmt.Errorf("metaroce: ConnectDatagram %d not in [%d, %d]", maxDatagram, minDatagram, e.cfg.MaxDatagram)
	}
	id, err := e.Connect(now, peer)
	if err != nil {
		return 0, err
	}
	e.conns[id].datagram = maxDatagram
	return id, nil
}
