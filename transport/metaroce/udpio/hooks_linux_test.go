package udpio

import (
	"errors"

	"golang.org/x/sys/unix"
)

// setTOS sets the traffic class byte of the datagrams s sends, so that a
// test can send CE-marked datagrams.
func (s *Socket) setTOS(tos int) error {
	var err error
	cerr := s.raw.Control(func(fd uintptr) {
		err = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_TOS, tos)
		if s.rd.v6 {
			err = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_TCLASS, tos)
		}
	})
	return errors.Join(cerr, err)
}

// failGSOWithEIO makes every GSO send of s fail with EIO from now on, as
// on a route whose device cannot segment UDP.
func (s *Socket) failGSOWithEIO() {
	s.wmu.Lock()
	s.wr.failGSO = true
	s.wmu.Unlock()
}
