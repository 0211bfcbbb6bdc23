package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	"github.com/gocoll/gocoll/bench"
	"github.com/gocoll/gocoll/internal/jobkey"
	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/mrtransport"
)

// Limits of the flags.
const (
	maxRanks   = 64
	maxSize    = 1 << 30
	maxCount   = 1 << 20
	maxTimeout = time.Hour
)

// options are the parsed flags.
type options struct {
	rank    int
	peers   []netip.AddrPort // each rank's first path address; path i binds port+i
	mode    metaroce.AuthMode
	test    string // "p2p" or "allreduce"
	paths   int
	size    int
	n       int
	timeout time.Duration
}

// modes are the -mode values, by metaroce.AuthMode's names.
var modes = []metaroce.AuthMode{metaroce.AuthNone, metaroce.AuthHeader, metaroce.AuthFull, metaroce.AuthEncrypt}

// parseMode reads an authentication mode by its name (AuthMode.String).
func parseMode(s string) (metaroce.AuthMode, error) {
	names := make([]string, len(modes))
	for i, m := range modes {
		if s == m.String() {
			return m, nil
		}
		names[i] = m.String()
	}
	return 0, fmt.Errorf("-mode %q: want one of %s", s, strings.Join(names, ", "))
}

// parsePeers reads the -peers list: each rank's address host:port,
// separated by commas, 2 to maxRanks of them, distinct, with a port that
// leaves room for paths ports and a specified address.
func parsePeers(s string, paths int) ([]netip.AddrPort, error) {
	if s == "" {
		return nil, errors.New("-peers is required: every rank's address host:port, comma-separated")
	}
	parts := strings.Split(s, ",")
	if len(parts) < 2 || len(parts) > maxRanks {
		return nil, fmt.Errorf("-peers: %d addresses, want 2 to %d", len(parts), maxRanks)
	}
	seen := make(map[netip.AddrPort]int, len(parts))
	out := make([]netip.AddrPort, len(parts))
	for r, part := range parts {
		ap, err := netip.ParseAddrPort(part)
		if err != nil {
			return nil, fmt.Errorf("-peers: rank %d: %v", r, err)
		}
		switch {
		case ap.Addr().IsUnspecified():
			return nil, fmt.Errorf("-peers: rank %d: unspecified address %v", r, ap)
		case ap.Port() == 0:
			return nil, fmt.Errorf("-peers: rank %d: port 0 (the ports must be known to every rank)", r)
		case int(ap.Port())+paths-1 > 65535:
			return nil, fmt.Errorf("-peers: rank %d: port %d leaves no room for %d paths", r, ap.Port(), paths)
		}
		if q, dup := seen[ap]; dup {
			return nil, fmt.Errorf("-peers: ranks %d and %d have one address %v", q, r, ap)
		}
		seen[ap] = r
		out[r] = ap
	}
	return out, nil
}

// parseArgs parses the command line (without the program name). It never
// prints: the error says what is wrong.
func parseArgs(args []string) (options, error) {
	fs := flag.NewFlagSet("authlab", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	rank := fs.Int("rank", -1, "this process's rank")
	peers := fs.String("peers", "", "every rank's address host:port, comma-separated, rank order")
	mode := fs.String("mode", "", "none, header, full or encrypt")
	test := fs.String("test", "", "p2p (2 ranks: rank 0 sends to rank 1) or allreduce")
	paths := fs.Int("paths", mrtransport.DefaultPaths, "paths (UDP sockets) per rank")
	size := fs.String("size", "64M", "bytes per message (p2p) or per AllReduce buffer")
	n := fs.Int("n", 8, "timed messages or AllReduce calls, after the warm-up")
	timeout := fs.Duration("timeout", 5*time.Minute, "bound on the whole run")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var o options
	var err error
	if o.mode, err = parseMode(*mode); err != nil {
		return options{}, err
	}
	if *paths < 1 || *paths > metaroce.MaxPaths {
		return options{}, fmt.Errorf("-paths %d: want 1 to %d", *paths, metaroce.MaxPaths)
	}
	o.paths = *paths
	if o.peers, err = parsePeers(*peers, o.paths); err != nil {
		return options{}, err
	}
	if *rank < 0 || *rank >= len(o.peers) {
		return options{}, fmt.Errorf("-rank %d: want 0 to %d (one per -peers address)", *rank, len(o.peers)-1)
	}
	o.rank = *rank
	switch o.test = *test; o.test {
	case "p2p":
		if len(o.peers) != 2 {
			return options{}, fmt.Errorf("-test p2p takes 2 ranks, -peers has %d", len(o.peers))
		}
	case "allreduce":
	default:
		return options{}, fmt.Errorf("-test %q: want p2p or allreduce", *test)
	}
	sz, err := bench.ParseSize(*size)
	if err != nil {
		return options{}, fmt.Errorf("-size: %v", err)
	}
	if sz < headerBytes || sz > maxSize || (o.test == "allreduce" && sz%4 != 0) {
		return options{}, fmt.Errorf("-size %d: want %d to %d bytes (a multiple of 4 for allreduce)", sz, headerBytes, maxSize)
	}
	o.size = int(sz)
	if *n < 1 || *n > maxCount {
		return options{}, fmt.Errorf("-n %d: want 1 to %d", *n, maxCount)
	}
	o.n = *n
	if *timeout <= 0 || *timeout > maxTimeout {
		return options{}, fmt.Errorf("-timeout %v: want more than 0, at most %v", *timeout, maxTimeout)
	}
	o.timeout = *timeout
	return o, nil
}

// readKey reads the job key from the first line of r (a trailing "\n" or
// "\r\n" is dropped) and parses it (jobkey.Parse). It reads at most
// jobkey.MaxLen+2 bytes; the error never holds the key.
func readKey(r io.Reader) (jobkey.Key, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, jobkey.MaxLen+2), jobkey.MaxLen+2)
	line, err := br.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return jobkey.Key{}, fmt.Errorf("reading the key on stdin: %v", err)
	}
	if err != nil && len(line) == jobkey.MaxLen+2 {
		return jobkey.Key{}, fmt.Errorf("key on stdin: longer than %d bytes", jobkey.MaxLen)
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if line == "" {
		return jobkey.Key{}, errors.New("no key on stdin (one line; modes other than none need it)")
	}
	k, err := jobkey.Parse(line)
	if err != nil {
		return jobkey.Key{}, fmt.Errorf("key on stdin: %w", err)
	}
	return k, nil
}
