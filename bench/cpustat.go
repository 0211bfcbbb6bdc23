package bench

import (
	"bytes"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// cpuTimes is the first line of Linux's /proc/stat: the host's CPU time,
// summed over its CPUs, in the kernel's USER_HZ ticks (10 ms on most
// machines) since boot.
type cpuTimes struct {
	total uint64 // user+nice+system+idle+iowait+irq+softirq+steal
	steal uint64 // time the hypervisor ran something else on these CPUs
}

// parseCPUStat reads the aggregate "cpu  user nice system idle iowait irq
// softirq steal [guest guest_nice ...]" line that starts b, the contents of
// /proc/stat. guest and guest_nice are left out of the total, as the
// kernel already counts them in user and nice. It returns false if that
// line is missing, not newline-terminated (cut off), has fewer than eight
// numbers (kernels before 2.6.11 have no steal), holds anything but
// unsigned decimal numbers, or sums past 2^64.
func parseCPUStat(b []byte) (cpuTimes, bool) {
	line, _, complete := bytes.Cut(b, []byte("\n"))
	if !complete {
		return cpuTimes{}, false
	}
	f := strings.Fields(string(line))
	const fields = 8 // user ... steal
	if len(f) < 1+fields || f[0] != "cpu" {
		return cpuTimes{}, false
	}
	var t cpuTimes
	for i, s := range f[1 : 1+fields] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return cpuTimes{}, false
		}
		var carry uint64
		if t.total, carry = bits.Add64(t.total, v, 0); carry != 0 {
			return cpuTimes{}, false
		}
		if i == fields-1 {
			t.steal = v
		}
	}
	return t, true
}

// stealMinTicks is the fewest ticks of host CPU time (20: 0.1 s of a
// 2-CPU host) an interval needs for its own steal share to be told: the
// counters advance by whole ticks, so below that one tick more or less of
// steal moves the share by over 5 points.
const stealMinTicks = 20

// stealShare is what the hypervisor stole from the host during a timed
// loop, from /proc/stat before and after it. Its fields are floats to ride
// in combine's AllReduce Max, where unknown (-1) loses to any known value.
type stealShare struct {
	pct      float64 // 100·Δsteal/Δtotal; -1 if unknown or Δtotal < stealMinTicks
	ticks    float64 // Δsteal; 0 if unknown
	cpuTicks float64 // Δtotal; -1 if /proc/stat could not be read
}

// stealUnknown is a stealShare with nothing known.
var stealUnknown = stealShare{pct: -1, cpuTicks: -1}

// stealOver is the steal share between two samples of /proc/stat, unknown
// if either is (ok false) or the counters ran backwards.
func stealOver(before, after cpuTimes, ok bool) stealShare {
	if !ok || after.total < before.total || after.steal < before.steal {
		return stealUnknown
	}
	dt, ds := after.total-before.total, after.steal-before.steal
	if ds > dt {
		return stealUnknown
	}
	s := stealShare{pct: -1, ticks: float64(ds), cpuTicks: float64(dt)}
	if dt >= stealMinTicks {
		s.pct = 100 * s.ticks / s.cpuTicks
	}
	return s
}

// stealTally sums the steal shares of a report's rows for its footer.
type stealTally struct {
	known           bool    // some rank could read /proc/stat
	ticks, cpuTicks float64 // sums over every timed loop
	worst           float64 // largest pct of a loop long enough to tell
	worstAt         string  // where: "allreduce at 16777216 B"; "" if none
}

// stealWarnPct is the steal share above which the footer calls the
// figures unreliable.
const stealWarnPct = 10

// add counts the measurements of r that ran.
func (s *stealTally) add(r result) {
	for v := range numVariants {
		m := r.meas[v]
		if !m.ran || m.steal.cpuTicks < 0 {
			continue
		}
		s.known = true
		s.ticks += m.steal.ticks
		s.cpuTicks += m.steal.cpuTicks
		if m.steal.pct >= 0 && (s.worstAt == "" || m.steal.pct > s.worst) {
			s.worst = m.steal.pct
			s.worstAt = fmt.Sprintf("%s at %d B", r.coll, r.geo.bytes)
			if v == inPlace {
				s.worstAt += " in place"
			}
		}
	}
}

// lines is the footer: none if no rank could read /proc/stat, else one
// line with the steal share over all timed loops (time-weighted) and the
// worst loop, and a warning line if either is above stealWarnPct.
func (s *stealTally) lines() []string {
	if !s.known {
		return nil
	}
	const head = "# CPU stolen by the hypervisor in timed loops : "
	if s.cpuTicks < stealMinTicks {
		return []string{fmt.Sprintf("%sunknown, the loops were too short (%.0f ticks of host CPU time in /proc/stat, %d needed; raise -n)",
			head, s.cpuTicks, stealMinTicks)}
	}
	avg := 100 * s.ticks / s.cpuTicks
	line := fmt.Sprintf("%s%.0f %% average", head, avg)
	if s.worstAt != "" {
		line += fmt.Sprintf(", %.0f %% worst (%s)", s.worst, s.worstAt)
	} else {
		line += fmt.Sprintf(" (no loop had the %d ticks of host CPU time needed to tell it alone)", stealMinTicks)
	}
	out := []string{line}
	if math.Max(avg, s.worst) > stealWarnPct {
		out = append(out, fmt.Sprintf("# WARNING: more than %d %% of the CPU was stolen: these figures are unreliable; rerun on a quiet host", stealWarnPct))
	}
	return out
}

// jsonPct is a steal share for --json: nil (null) if unknown, else percent
// to 0.1.
func jsonPct(s stealShare) *float64 {
	if s.pct < 0 {
		return nil
	}
	p := math.Round(s.pct*10) / 10
	return &p
}
