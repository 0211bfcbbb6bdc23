package mrtransport

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net/netip"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/udpio"
)

// loopback reports whether the path sockets bind a loopback address
// (ListenAddr, with no Interfaces).
func (c *Config) loopback() bool {
	return c.ListenAddr.Addr().IsLoopback() && len(c.Interfaces) == 0
}

// withDefaults returns c with defaults filled in, or an error naming the
// first field out of range.
func (c Config) withDefaults() (Config, error) {
	bad := func(format string, args ...any) (Config, error) {
		return c, fmt.Errorf("mrtransport: bad configuration: "+format, args...)
	}
	if !c.ListenAddr.IsValid() {
		c.ListenAddr = netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), 0)
		if len(c.Interfaces) > 0 {
			c.ListenAddr = netip.AddrPortFrom(netip.IPv4Unspecified(), 0)
		}
	}
	if c.MaxDatagram == 0 {
		c.MaxDatagram, c.autoDatagram = DefaultNICDatagram, true
		if c.loopback() {
			c.MaxDatagram, c.autoDatagram = DefaultLoopbackDatagram, false
		}
	}
	if c.Core.AckDelay == 0 && c.loopback() {
		c.Core.AckDelay = DefaultLoopbackAckDelay
	}
	if c.Core.DelayTarget == 0 && c.loopback() {
		c.Core.DelayTarget = DefaultLoopbackDelayTarget
	}
	if c.Core.MinRTO == 0 && c.loopback() {
		c.Core.MinRTO = DefaultLoopbackMinRTO
		if c.Core.MaxRTO > 0 {
			c.Core.MinRTO = min(c.Core.MinRTO, c.Core.MaxRTO)
		}
	}
	ints := []struct {
		name          string
		v             *int
		def, min, max int
	}{
		{"Paths", &c.Paths, DefaultPaths, 1, metaroce.MaxPaths},
		{"MaxDatagram", &c.MaxDatagram, DefaultLoopbackDatagram, 256, 65507},
		{"Batch", &c.Batch, DefaultBatch, 1, MaxBatch},
		{"AbortMemory", &c.AbortMemory, DefaultAbortMemory, 1, MaxAbortMemory},
		{"SocketBuffer", &c.SocketBuffer, DefaultSocketBuffer, 1, MaxSocketBuffer},
		{"EagerBuffer", &c.EagerBuffer, DefaultEagerBuffer, 1, MaxEagerBuffer},
	}
	for _, f := range ints {
		if *f.v == 0 {
			*f.v = f.def
		}
		if *f.v < f.min || *f.v > f.max {
			return bad("%s=%d not in [%d, %d]", f.name, *f.v, f.min, f.max)
		}
	}
	switch {
	case c.EagerBytes == 0:
		c.EagerBytes = DefaultEagerBytes
	case c.EagerBytes > MaxEagerBytes:
		return bad("EagerBytes=%d above %d", c.EagerBytes, MaxEagerBytes)
	}
	switch {
	case c.SpinWait == 0:
		c.SpinWait = DefaultSpinWait
	case c.SpinWait < 0:
		c.SpinWait = 0
	case c.SpinWait > MaxSpinWait:
		return bad("SpinWait=%v above %v", c.SpinWait, MaxSpinWait)
	}
	switch {
	case c.CoalesceWait < 0:
		c.CoalesceWait = -1 // off; 0 stays the default's rule (autoCoalesce)
	case c.CoalesceWait > MaxCoalesceWait:
		return bad("CoalesceWait=%v above %v", c.CoalesceWait, MaxCoalesceWait)
	}
	switch {
	case c.ControlDSCP == 0:
		c.ControlDSCP = DefaultControlDSCP
	case c.ControlDSCP < 0:
		c.ControlDSCP = 0
	case c.ControlDSCP > 63:
		return bad("ControlDSCP=%d above 63", c.ControlDSCP)
	}
	switch {
	case c.CloseLinger == 0:
		c.CloseLinger = DefaultCloseLinger
	case c.CloseLinger > MaxCloseLinger:
		return bad("CloseLinger=%v above %v", c.CloseLinger, MaxCloseLinger)
	}
	if c.Size < 1 || c.Size > MaxSize {
		return bad("Size=%d not in [1, %d]", c.Size, MaxSize)
	}
	if c.Rank < 0 || c.Rank >= c.Size {
		return bad("Rank=%d not in [0, Size=%d)", c.Rank, c.Size)
	}
	if p := int(c.ListenAddr.Port()); p != 0 && p+c.Paths-1 > 65535 {
		return bad("ListenAddr port %d leaves no room for %d paths", p, c.Paths)
	}
	if err := c.PortRange.check(); err != nil {
		return bad("PortRange: %v", err)
	}
	if !c.PortRange.IsZero() {
		if c.ListenAddr.Port() != 0 {
			return bad("PortRange %v with ListenAddr port %d: set one or the other", c.PortRange, c.ListenAddr.Port())
		}
		if c.PortRange.Len() < c.Paths {
			return bad("PortRange %v holds %d ports, fewer than Paths=%d", c.PortRange, c.PortRange.Len(), c.Paths)
		}
	}
	if len(c.Interfaces) > metaroce.MaxPaths {
		return bad("%d Interfaces, at most %d", len(c.Interfaces), metaroce.MaxPaths)
	}
	for _, name := range c.Interfaces {
		if err := checkInterface(name); err != nil {
			return bad("Interfaces: %v", err)
		}
	}
	c.Core.NodeID, c.Core.Paths, c.Core.MaxDatagram = uint64(c.Rank), c.Paths, c.MaxDatagram
	if c.Core.MaxSends == 0 {
		c.Core.MaxSends = DefaultMaxSends
	}
	if c.Core.MaxRecvs == 0 {
		c.Core.MaxRecvs = DefaultMaxRecvs
	}
	if c.Core.MsgWindow == 0 {
		c.Core.MsgWindow = DefaultMsgWindow
	}
	c.Core.ReportUnexpected = true
	c.Core.DelaySmallAcks = c.Core.DelaySmallAcks || c.EagerBytes > 0
	c.Core.PiggybackAcks = true
	c.Core.AckRoom = c.AckRoom
	switch c.PayloadCRC {
	case PayloadCRCAuto:
		c.Core.PayloadUnchecked = c.loopback() && c.OpenSocket == nil
	case PayloadCRCOn, PayloadCRCOff:
		c.Core.PayloadUnchecked = c.PayloadCRC == PayloadCRCOff
	default:
		return bad("PayloadCRC=%d unknown", c.PayloadCRC)
	}
	if c.Core.RecvCapacity == 0 {
		c.Core.RecvCapacity = -1
	}
	if c.Core.IDSeed == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
		c.Core.IDSeed = binary.LittleEndian.Uint64(b[:]) | 1
	}
	if c.OpenSocket == nil {
		uc := udpio.Config{ReadBuffer: c.SocketBuffer, WriteBuffer: c.SocketBuffer,
			BatchSize: min(c.Batch, udpio.MaxBatchSize), DisableTimestamps: !c.ArrivalTimes,
			Unpolled: c.coalesced()}
		ifs := c.Interfaces
		c.OpenSocket = func(path int, addr netip.AddrPort) (PathSocket, error) {
			pc := uc
			if len(ifs) > 0 {
				if name := ifs[path%len(ifs)]; !isAddr(name) {
					pc.Device = name
				}
			}
			return OpenUDPIO(addr, pc)
		}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}
