package hosts

import (
	"fmt"
	"strconv"
	"strings"
)

// maxRangeValue bounds the numbers of a node list range.
const maxRangeValue = 1<<31 - 1

// pattern is one node list entry: literal text between bracket sets, e.g.
// "rack[1-2]-n[01-03]" is parts {"rack", "-n", ""} and two sets.
type pattern struct {
	parts []string    // len(sets)+1 literals
	sets  [][]numSpan // each set: its ranges, in order
}

// numSpan is lo..hi, printed with at least width digits.
type numSpan struct {
	lo, hi int
	width  int
}

func parsePattern(e string) (pattern, error) {
	var p pattern
	for {
		open := strings.IndexByte(e, '[')
		if open < 0 {
			p.parts = append(p.parts, e)
			return p, nil
		}
		end := strings.IndexByte(e, ']') // splitTopLevel checked the pairing
		set, err := parseSet(e[open+1 : end])
		if err != nil {
			return p, err
		}
		p.parts = append(p.parts, e[:open])
		p.sets = append(p.sets, set)
		e = e[end+1:]
	}
}

// parseSet parses the inside of a bracket: "1-3,7,09-11".
func parseSet(s string) ([]numSpan, error) {
	if s == "" {
		return nil, fmt.Errorf("empty []")
	}
	var set []numSpan
	for _, item := range strings.Split(s, ",") {
		loText, hiText, isRange := strings.Cut(item, "-")
		lo, err := parseNodeNumber(loText)
		if err != nil {
			return nil, err
		}
		hi := lo
		if isRange {
			if hi, err = parseNodeNumber(hiText); err != nil {
				return nil, err
			}
			if hi < lo {
				return nil, fmt.Errorf("range %q runs backwards", item)
			}
		}
		set = append(set, numSpan{lo: lo, hi: hi, width: len(loText)})
	}
	return set, nil
}

func parseNodeNumber(s string) (int, error) {
	if s == "" || len(s) > 10 {
		return 0, fmt.Errorf("%q is not a node number", s)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%q is not a node number", s)
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > maxRangeValue {
		return 0, fmt.Errorf("node number %q is larger than %d", s, maxRangeValue)
	}
	return n, nil
}

// expand appends p's names to names until there are max of them.
func (p pattern) expand(names []string, max int) []string {
	var walk func(level int, prefix string)
	walk = func(level int, prefix string) {
		if len(names) >= max {
			return
		}
		prefix += p.parts[level]
		if level == len(p.sets) {
			names = append(names, prefix)
			return
		}
		for _, span := range p.sets[level] {
			for n := span.lo; n <= span.hi && len(names) < max; n++ {
				walk(level+1, prefix+pad(n, span.width))
			}
		}
	}
	walk(0, "")
	return names
}

// pad prints n with at least width digits.
func pad(n, width int) string {
	s := strconv.Itoa(n)
	if len(s) < width {
		s = strings.Repeat("0", width-len(s)) + s
	}
	return s
}
