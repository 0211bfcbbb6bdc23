//go:build !linux

package mrtransport

import (
	"errors"
	"net/netip"
)

// mtuSupported: MTUs are not read here; datagrams keep DefaultNICDatagram.
const mtuSupported = false

func routeMTU(pathBind, netip.AddrPort) (int, error) { return 0, errors.ErrUnsupported }
