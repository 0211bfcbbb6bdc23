// Package hosts parses the host lists of a gocoll job: hostfiles, the
// --hosts flag of gocoll run, and Slurm's compressed node lists.
//
// A hostfile has one host per line, in the convention Open MPI, Horovod and
// DeepSpeed share, with two more fields for gocoll:
//
//	# comment
//	node1 slots=4 site=paris addr=10.1.0.11
//	node2 slots=4 site=paris             # a comment after the fields
//	node3 slots=4 site=lyon  addr=10.2.0.11
//
// The first field is the host (the name --rsh is given); then, in any order,
// slots=N (ranks to start there, default 1), max_slots=M (Open MPI's: the
// most ranks the host takes when gocoll run --oversubscribe puts more ranks
// than slots on it; max-slots= too), site=NAME (default
// [topology.DefaultSite]) and addr=IP (the address other ranks reach the
// host at; by default the host's name resolves to it). MPICH's form,
// host:N (N slots), is read too, alone or followed by the fields:
//
//	node1:4
//	node2:4 site=lyon
//
// Unknown fields, repeated fields, repeated hosts and malformed values are
// errors that name the line.
//
// Every parser here bounds its input (see [MaxHostfileBytes],
// [MaxLineBytes], [MaxHosts]) and returns an error, never panics, on bad
// input.
package hosts

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"

	"github.com/gocoll/gocoll/topology"
)

// Limits of the parsers.
const (
	// MaxHostfileBytes is the largest hostfile ParseHostfile reads.
	MaxHostfileBytes = 4 << 20
	// MaxLineBytes is the longest line of a hostfile.
	MaxLineBytes = 4096
	// MaxHosts is the largest number of hosts in one list.
	MaxHosts = 1 << 16
	// MaxSlots is the largest slot count of one host.
	MaxSlots = topology.MaxRanks
)

// Entry is one line of a hostfile.
type Entry struct {
	topology.HostSlots
	// MaxSlots is max_slots=, at least Slots; 0 if not given (no bound).
	MaxSlots int
}

// ParseHostfile reads a hostfile (see the package doc) from r and returns
// its hosts in file order. name is used in error messages only. It fails on
// a file with no hosts.
func ParseHostfile(name string, r io.Reader) ([]topology.HostSlots, error) {
	entries, err := ReadHostfile(name, r)
	if err != nil {
		return nil, err
	}
	list := make([]topology.HostSlots, len(entries))
	for i, e := range entries {
		list[i] = e.HostSlots
	}
	return list, nil
}

// ReadHostfile is ParseHostfile with each line's max_slots.
func ReadHostfile(name string, r io.Reader) ([]Entry, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxHostfileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > MaxHostfileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, MaxHostfileBytes)
	}
	var list []Entry
	total := 0
	lineOf := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 512), MaxLineBytes+1)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if len(line) > MaxLineBytes {
			return nil, fmt.Errorf("%s:%d: line longer than %d bytes", name, n, MaxLineBytes)
		}
		h, ok, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, n, err)
		}
		if !ok {
			continue
		}
		if first, dup := lineOf[h.Host]; dup {
			return nil, fmt.Errorf("%s:%d: host %q already listed on line %d", name, n, h.Host, first)
		}
		if len(list) == MaxHosts {
			return nil, fmt.Errorf("%s:%d: more than %d hosts", name, n, MaxHosts)
		}
		if total += h.Slots; total > MaxSlots {
			return nil, fmt.Errorf("%s:%d: more than %d slots in all", name, n, MaxSlots)
		}
		lineOf[h.Host] = n
		list = append(list, h)
	}
	if err := sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			return nil, fmt.Errorf("%s: a line is longer than %d bytes", name, MaxLineBytes)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("%s: no hosts (want lines like \"node1 slots=4\")", name)
	}
	return list, nil
}

// parseLine parses one hostfile line; ok is false for a blank or comment
// line.
func parseLine(line string) (h Entry, ok bool, err error) {
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return h, false, nil
	}
	host, mpichSlots, mpich := fields[0], "", false
	if strings.Count(host, ":") == 1 { // MPICH's host:N; IPv6 addresses have more colons
		host, mpichSlots, mpich = strings.Cut(host, ":")
	}
	if err := CheckHost(host); err != nil {
		return h, false, err
	}
	h = Entry{HostSlots: topology.HostSlots{Host: host, Slots: 1}}
	seen := map[string]bool{}
	if mpich {
		if err := setField(&h, "slots", mpichSlots); err != nil {
			return h, false, fmt.Errorf("%s: %v", fields[0], err)
		}
		seen["slots"] = true
	}
	for _, f := range fields[1:] {
		key, value, found := strings.Cut(f, "=")
		if !found {
			return h, false, fmt.Errorf("field %q is not key=value (want slots=N, max_slots=N, site=NAME or addr=IP)", f)
		}
		if key == "max-slots" {
			key = "max_slots"
		}
		if seen[key] {
			return h, false, fmt.Errorf("%s= given twice", key)
		}
		seen[key] = true
		if err := setField(&h, key, value); err != nil {
			return h, false, err
		}
	}
	if h.MaxSlots > 0 && h.MaxSlots < h.Slots {
		return h, false, fmt.Errorf("max_slots=%d is below slots=%d", h.MaxSlots, h.Slots)
	}
	return h, true, nil
}

func setField(h *Entry, key, value string) error {
	switch key {
	case "slots":
		n, err := ParseSlots(value)
		if err != nil {
			return err
		}
		h.Slots = n
	case "max_slots":
		n, err := ParseSlots(value)
		if err != nil {
			return fmt.Errorf("max_%v", err)
		}
		h.MaxSlots = n
	case "site":
		if err := checkWord("site", value); err != nil {
			return err
		}
		h.Site = value
	case "addr":
		a, err := netip.ParseAddr(value)
		if err != nil || a.Zone() != "" {
			return fmt.Errorf("addr=%q is not an IP address", value)
		}
		h.Addr = a.String()
	default:
		return fmt.Errorf("unknown field %q (want slots=N, max_slots=N, site=NAME or addr=IP)", key+"="+value)
	}
	return nil
}

// ParseSlots parses a slot count: a decimal integer in [1, MaxSlots].
func ParseSlots(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxSlots {
		return 0, fmt.Errorf("slots=%q is not a whole number from 1 to %d", s, MaxSlots)
	}
	return n, nil
}

// CheckHost reports whether s is acceptable as a host name: 1 to 255 bytes
// of letters, digits and . - _ : (so IPv6 addresses too), starting with a
// letter, digit or ':'.
func CheckHost(s string) error {
	if err := checkWord("host", s); err != nil {
		return err
	}
	if c := s[0]; c == '.' || c == '-' || c == '_' {
		return fmt.Errorf("host %q starts with %q", s, c)
	}
	return nil
}

// CheckName reports whether s is acceptable as a site (or other) name:
// 1 to topology.MaxNameBytes bytes of letters, digits and . - _ :. what
// names it in the error.
func CheckName(what, s string) error { return checkWord(what, s) }

// checkWord accepts 1 to topology.MaxNameBytes bytes of [A-Za-z0-9._:-].
func checkWord(what, s string) error {
	if s == "" {
		return fmt.Errorf("empty %s", what)
	}
	if len(s) > topology.MaxNameBytes {
		return fmt.Errorf("%s %.20q... is longer than %d bytes", what, s, topology.MaxNameBytes)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '.' || c == '-' || c == '_' || c == ':':
		default:
			return fmt.Errorf("%s %q has the character %q (allowed: letters, digits and . - _ :)", what, s, c)
		}
	}
	return nil
}
