// Package affinity is gocoll's one view of CPU affinity, shared by the
// launcher, which binds the ranks it starts on its own host at fork
// (gocoll run --bind-to core), and by a rank started on another host,
// which binds itself as it joins its job (the remote host's cores are
// known only there).
//
// Only Linux binds: elsewhere Cores is nil and Bind returns an error.
package affinity

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxCPUs is the most CPUs a mask holds (unix.CPUSet's size).
const MaxCPUs = 1024

// Pick returns the CPUs of the index-th of n ranks of one host bound to a
// core each, given the host's cores (Cores): the index-th core's. More
// ranks than cores is an error, one line, unless oversubscribe, which
// wraps around. Both the launcher and a remote rank choose with it, so
// that a host's ranks get the same cores whichever side binds them.
func Pick(cores [][]int, index, n int, oversubscribe bool) ([]int, error) {
	switch {
	case len(cores) == 0:
		return nil, fmt.Errorf("--bind-to core: cannot tell this host's cores (sched_getaffinity)")
	case n < 1 || index < 0 || index >= n:
		return nil, fmt.Errorf("--bind-to core: rank %d of %d on this host is not a rank of it", index, n)
	case n > len(cores) && !oversubscribe:
		return nil, fmt.Errorf("--bind-to core: %d ranks on this host but %d cores to bind them to (--oversubscribe lets ranks share cores, or --bind-to none)", n, len(cores))
	}
	return append([]int(nil), cores[index%len(cores)]...), nil
}

// Format writes cpus (sorted) as the kernel's cpu lists: "0-3,8".
func Format(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(cpus[i]))
		} else {
			parts = append(parts, strconv.Itoa(cpus[i])+"-"+strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// maxListBytes bounds a cpu list Parse reads: every CPU below MaxCPUs
// written alone, with its comma.
const maxListBytes = 5 * MaxCPUs

// Parse reads a cpu list as Format writes it ("0-3,8": CPUs and ranges of
// them, ascending, none twice) and returns its CPUs, sorted. A CPU outside
// [0, MaxCPUs), a range or CPU out of order or overlapping the one before,
// an empty list or a list longer than any Format writes is an error, one
// line, naming the part.
func Parse(s string) ([]int, error) {
	if s == "" || len(s) > maxListBytes {
		return nil, fmt.Errorf("cpu list of %d bytes: want 1 to %d", len(s), maxListBytes)
	}
	var cpus []int
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		switch {
		case err1 != nil || err2 != nil || a < 0 || b < a || b >= MaxCPUs || strings.HasPrefix(lo, "+") || strings.HasPrefix(hi, "+"):
			return nil, fmt.Errorf("cpu list %q: %q is not a CPU or a range of CPUs in [0, %d]", s, part, MaxCPUs-1)
		case len(cpus) > 0 && a <= cpus[len(cpus)-1]:
			return nil, fmt.Errorf("cpu list %q: %q is not above the CPUs before it", s, part)
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}
