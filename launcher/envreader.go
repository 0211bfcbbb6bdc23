package launcher

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gocoll/gocoll/transport/tcp"
)

// envReader reads and checks variables, remembering the first error.
type envReader struct {
	lookup LookupFunc
}

func (e envReader) get(name string) string {
	v, _ := e.lookup(name)
	return strings.TrimSpace(v)
}

func (e envReader) has(name string) bool { return e.get(name) != "" }

// int reads a required integer in [lo, hi].
func (e envReader) int(name string, lo, hi int) (int, error) {
	v := e.get(name)
	if v == "" {
		return 0, fmt.Errorf("gocoll: %s is not set", name)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("gocoll: %s=%q is not a whole number from %d to %d", name, v, lo, hi)
	}
	return n, nil
}

// optInt reads an optional integer in [lo, hi], def if unset.
func (e envReader) optInt(name string, lo, hi, def int) (int, error) {
	if !e.has(name) {
		return def, nil
	}
	return e.int(name, lo, hi)
}

// rankSize reads a rank and a world size, and checks rank < size.
func (e envReader) rankSize(rankVar, sizeVar string) (rank, size int, err error) {
	if size, err = e.int(sizeVar, 1, tcp.MaxWorldSize); err != nil {
		return 0, 0, err
	}
	if rank, err = e.int(rankVar, 0, tcp.MaxWorldSize-1); err != nil {
		return 0, 0, err
	}
	if rank >= size {
		return 0, 0, fmt.Errorf("gocoll: %s=%d is not below %s=%d", rankVar, rank, sizeVar, size)
	}
	return rank, size, nil
}

// firstSet is the value of the first of names that is set, or "".
func firstSet(e envReader, names ...string) string {
	for _, n := range names {
		if v := e.get(n); v != "" {
			return v
		}
	}
	return ""
}

// duration reads a Go duration ("30s") or a number of seconds, in [lo,
// MaxTimeout], def if unset.
func (e envReader) duration(name string, def, lo time.Duration) (time.Duration, error) {
	return e.durationIn(name, def, lo, MaxTimeout)
}

// durationIn is duration in [lo, hi] (hi at most MaxTimeout).
func (e envReader) durationIn(name string, def, lo, hi time.Duration) (time.Duration, error) {
	v := e.get(name)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		secs, serr := strconv.ParseFloat(v, 64)
		if serr != nil || secs != secs {
			return 0, fmt.Errorf("gocoll: %s=%q is not a duration (like 30s)", name, v)
		}
		d = time.Duration(min(secs, MaxTimeout.Seconds()+1) * float64(time.Second))
	}
	if d < lo || d > hi {
		return 0, fmt.Errorf("gocoll: %s=%q is outside [%v, %v]", name, v, lo, hi)
	}
	return d, nil
}

// flag reads 0/1 (or true/false), def if unset.
func (e envReader) flag(name string, def bool) (bool, error) {
	switch strings.ToLower(e.get(name)) {
	case "":
		return def, nil
	case "1", "true", "yes":
		return true, nil
	case "0", "false", "no":
		return false, nil
	}
	return false, fmt.Errorf("gocoll: %s=%q: want 1 or 0", name, e.get(name))
}
