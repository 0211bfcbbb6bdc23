package hosts

import (
	"fmt"
	"strings"

	"github.com/gocoll/gocoll/topology"
)

// MaxListBytes bounds the strings ParseHostList and ExpandNodeList accept.
const MaxListBytes = 1 << 20

// ParseHostList parses the --hosts form of a host list: comma-separated
// entries host or host:slots (slots default to 1), such as "h1:4,h2:4". An
// IPv6 host with slots is bracketed, "[fd00::1]:4"; an entry with more than
// one colon and no brackets is an IPv6 host with one slot. Every host is
// on the default site; use a hostfile to give sites and addresses.
func ParseHostList(s string) ([]topology.HostSlots, error) {
	if len(s) > MaxListBytes {
		return nil, fmt.Errorf("host list longer than %d bytes", MaxListBytes)
	}
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("empty host list (want host:slots,host:slots)")
	}
	var list []topology.HostSlots
	total := 0
	seen := map[string]bool{}
	for _, entry := range strings.Split(s, ",") {
		h, err := parseListEntry(strings.TrimSpace(entry))
		if err != nil {
			return nil, fmt.Errorf("host list entry %q: %v", entry, err)
		}
		if seen[h.Host] {
			return nil, fmt.Errorf("host %q listed twice", h.Host)
		}
		if len(list) == MaxHosts {
			return nil, fmt.Errorf("more than %d hosts", MaxHosts)
		}
		if total += h.Slots; total > MaxSlots {
			return nil, fmt.Errorf("more than %d slots in all", MaxSlots)
		}
		seen[h.Host] = true
		list = append(list, h)
	}
	return list, nil
}

func parseListEntry(e string) (topology.HostSlots, error) {
	host, slots, hasSlots := e, "", false
	switch {
	case strings.HasPrefix(e, "["):
		end := strings.IndexByte(e, ']')
		if end < 0 {
			return topology.HostSlots{}, fmt.Errorf("no closing ]")
		}
		host, slots = e[1:end], e[end+1:]
		if slots != "" {
			if !strings.HasPrefix(slots, ":") {
				return topology.HostSlots{}, fmt.Errorf("want :slots after ]")
			}
			slots, hasSlots = slots[1:], true
		}
	case strings.Count(e, ":") == 1:
		host, slots, hasSlots = strings.Cut(e, ":")
	}
	if err := CheckHost(host); err != nil {
		return topology.HostSlots{}, err
	}
	h := topology.HostSlots{Host: host, Slots: 1}
	if hasSlots {
		n, err := ParseSlots(slots)
		if err != nil {
			return h, err
		}
		h.Slots = n
	}
	return h, nil
}

// ExpandNodeList expands a Slurm node list such as
// "gnode[1-3,7],login[01-02]x" into host names, in order, stopping after
// max names (max >= 1). A bracket holds comma-separated numbers or ranges
// lo-hi (hi >= lo, at most 2^31); a range keeps the zero padding of lo. A
// name may have several brackets, which expand as nested loops, the first
// outermost.
func ExpandNodeList(s string, max int) ([]string, error) {
	if len(s) > MaxListBytes {
		return nil, fmt.Errorf("node list longer than %d bytes", MaxListBytes)
	}
	if max < 1 {
		return nil, fmt.Errorf("node list: want at least 1 name, not %d", max)
	}
	entries, err := splitTopLevel(s)
	if err != nil {
		return nil, fmt.Errorf("node list %q: %v", s, err)
	}
	var names []string
	for _, e := range entries {
		pattern, err := parsePattern(e)
		if err != nil {
			return nil, fmt.Errorf("node list %q: %v", s, err)
		}
		names = pattern.expand(names, max)
		if len(names) >= max {
			break
		}
	}
	for _, n := range names {
		if err := CheckHost(n); err != nil {
			return nil, fmt.Errorf("node list %q: %v", s, err)
		}
	}
	return names, nil
}

// splitTopLevel splits s at the commas outside brackets.
func splitTopLevel(s string) ([]string, error) {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			if depth++; depth > 1 {
				return nil, fmt.Errorf("nested [ at offset %d", i)
			}
		case ']':
			if depth--; depth < 0 {
				return nil, fmt.Errorf("] without [ at offset %d", i)
			}
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("[ without ]")
	}
	out = append(out, s[start:])
	for _, e := range out {
		if e == "" {
			return nil, fmt.Errorf("empty entry")
		}
	}
	return out, nil
}
