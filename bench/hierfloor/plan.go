package main

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// World is the lab's layout: 2 sites x 2 hosts x 2 ranks, ranks numbered
// as `gocoll lab hostfile --slots 2` lists them (host h's ranks are 2h and
// 2h+1; hosts 0 and 1 form site 1, hosts 2 and 3 site 2).
const (
	World        = 8
	RanksPerHost = 2
	HostsPerSite = 2
)

// Phase kinds: where a phase's bytes go.
const (
	KindMem = "mem" // inside a host (shared memory): copies and sums in memory
	KindLAN = "lan" // between the 2 hosts of a site
	KindWAN = "wan" // between the sites (a shard owner pair)
)

// Phase is one step of a hierarchical AllReduce call as one rank sees it.
// Bytes is what the rank sends (and, for the network phases, receives from
// Peer) in the step; Sum says whether the received bytes are added into
// the buffer (a reduce-scatter, an exchange that reduces) or copied (an
// all-gather).
type Phase struct {
	Name  string
	Kind  string
	Peer  int // the rank exchanged with (-1: the memory phases' host peer, by shared memory)
	Bytes int
	Sum   bool
}

// Plan returns the phases of one call of an AllReduce of size bytes at
// rank, in order, as collective/hier.go runs it on this layout (innermost
// level first): a reduce-scatter inside the host (each rank reduces S/2),
// between the site's 2 hosts (each S/4: the rank and its counterpart on
// the other host, rank^2, exchange S/4), the shard owners' AllReduce
// across the sites (rank and rank^4 exchange S/4 and sum), then the
// all-gathers back out (S/4 over the LAN, S/2 in the host). size must be a
// positive multiple of 4*RanksPerHost*HostsPerSite (whole float32s in
// every shard).
func Plan(rank, size int) ([]Phase, error) {
	if rank < 0 || rank >= World {
		return nil, fmt.Errorf("rank %d out of 0..%d", rank, World-1)
	}
	if q := 4 * RanksPerHost * HostsPerSite; size <= 0 || size%q != 0 {
		return nil, fmt.Errorf("size %d: want a positive multiple of %d", size, q)
	}
	half, quarter := size/RanksPerHost, size/(RanksPerHost*HostsPerSite)
	lan, wan := rank^RanksPerHost, rank^(RanksPerHost*HostsPerSite)
	return []Phase{
		{Name: "host-rs", Kind: KindMem, Peer: -1, Bytes: half, Sum: true},
		{Name: "lan-rs", Kind: KindLAN, Peer: lan, Bytes: quarter, Sum: true},
		{Name: "wan-ar", Kind: KindWAN, Peer: wan, Bytes: quarter, Sum: true},
		{Name: "lan-ag", Kind: KindLAN, Peer: lan, Bytes: quarter},
		{Name: "host-ag", Kind: KindMem, Peer: -1, Bytes: half},
	}, nil
}

// HeaderLen is the bytes of Header at the start of every datagram.
const HeaderLen = 16

// Header tags a datagram with the call and phase it belongs to and where
// its payload goes in the phase's bytes.
type Header struct {
	Call   uint32
	Phase  uint16
	Offset uint64 // of the payload in the phase's bytes
}

const magic = 0x4846 // "HF"

// Put writes h into b[:HeaderLen].
func (h Header) Put(b []byte) {
	binary.LittleEndian.PutUint16(b[0:], magic)
	binary.LittleEndian.PutUint16(b[2:], h.Phase)
	binary.LittleEndian.PutUint32(b[4:], h.Call)
	binary.LittleEndian.PutUint64(b[8:], h.Offset)
}

var errHeader = errors.New("not a hierfloor datagram")

// ParseHeader reads a datagram's header and returns it with the payload;
// a datagram too short or without the magic number is an error.
func ParseHeader(d []byte) (Header, []byte, error) {
	if len(d) < HeaderLen || binary.LittleEndian.Uint16(d) != magic {
		return Header{}, nil, errHeader
	}
	return Header{
		Phase:  binary.LittleEndian.Uint16(d[2:]),
		Call:   binary.LittleEndian.Uint32(d[4:]),
		Offset: binary.LittleEndian.Uint64(d[8:]),
	}, d[HeaderLen:], nil
}

// Datagrams returns how many datagrams of at most payload bytes (after
// the header) carry n bytes.
func Datagrams(n, payload int) int { return (n + payload - 1) / payload }

// Span returns piece p of n bytes cut in pieces pieces, each a multiple
// of align bytes but the last: its offset and length (0 past the end).
func Span(n, pieces, align, p int) (off, length int) {
	ps := PieceLen(n, pieces, align)
	off = min(p*ps, n)
	return off, min(ps, n-off)
}

// PieceLen is the length of each piece but the last of n bytes cut in
// pieces pieces of a multiple of align bytes.
func PieceLen(n, pieces, align int) int {
	ps := (n + pieces - 1) / pieces
	return (ps + align - 1) / align * align
}
