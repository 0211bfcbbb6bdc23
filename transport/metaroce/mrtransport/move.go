package mrtransport

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// A path move tells a peer that one of this rank's path sockets has a new
// port (its address stays); the peer sends that path's datagrams there
// from then on. It travels as a control message:
//
//	byte    ctrlVersion
//	byte    ctrlMove
//	uint16  path   (big endian)
//	uint16  port, not 0
const (
	ctrlMove    = 2
	ctrlMoveLen = 2 + 2 + 2
)

func appendMove(b []byte, path int, port uint16) []byte {
	b = append(b, ctrlVersion, ctrlMove)
	b = binary.BigEndian.AppendUint16(b, uint16(path))
	return binary.BigEndian.AppendUint16(b, port)
}

// isMove reports whether control message b is a path move (well formed
// or not).
func isMove(b []byte) bool { return len(b) >= 2 && b[0] == ctrlVersion && b[1] == ctrlMove }

func parseMove(b []byte) (int, uint16, error) {
	if len(b) != ctrlMoveLen || !isMove(b) {
		return 0, 0, fmt.Errorf("%w: path move of %d bytes", errControl, len(b))
	}
	path, port := int(binary.BigEndian.Uint16(b[2:])), binary.BigEndian.Uint16(b[4:])
	if port == 0 {
		return 0, 0, fmt.Errorf("%w: path move to port 0", errControl)
	}
	return path, port, nil
}

// peerMoved applies p's path move b: that path's address gets the new
// port. A move of a path p does not have is ignored. The caller holds
// eng.mu.
func (e *Endpoint) peerMoved(p *peer, b []byte) {
	path, port, err := parseMove(b)
	if err != nil {
		e.counters.badControl++
		e.log.Warn("mrtransport: bad control message", "peer", p.rank, "err", err)
		return
	}
	if path >= len(p.addrs) {
		return
	}
	old := p.addrs[path]
	p.addrs[path] = netip.AddrPortFrom(old.Addr(), port)
	e.log.Info("mrtransport: peer path moved", "peer", p.rank, "path", path, "from", old, "to", p.addrs[path])
}
