//go:build !linux

package tcp

import "net"

// rawIO is Linux's raw-system-call path (rawio_linux.go); elsewhere a
// connection reads and writes through net.Conn itself.
type rawIO struct{ net.Conn }

// newRawIO returns false: connections use nc's own reads and writes.
func newRawIO(net.Conn) (rawIO, bool) { return rawIO{}, false }
