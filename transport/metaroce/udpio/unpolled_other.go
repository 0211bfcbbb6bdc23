//go:build !linux

package udpio

import (
	"net/netip"
	"sync/atomic"
)

// fdConn exists on Linux only (Config.Unpolled); Socket.unpolled stays nil.
type fdConn struct{ writeDeadline atomic.Int64 }

// unpoll does nothing: Config.Unpolled is Linux's.
func (s *Socket) unpoll() error { return nil }

func (*fdConn) alive() error                     { return nil }
func (*fdConn) close(local netip.AddrPort) error { return nil }
