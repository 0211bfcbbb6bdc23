package bench

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// SizeMax is the largest byte size ParseSize accepts (64 GiB): a benchmark
// allocates two buffers of its largest size per rank.
const SizeMax = 64 << 30

// ParseSize reads a byte count as nccl-tests does: a decimal number with an
// optional suffix K, M or G (powers of 1024, either case), which may be
// followed by "B" or "iB" ("64K", "64KiB", "1M", "8", "8B"). It fails on
// anything else, on negative numbers and on sizes above SizeMax.
func ParseSize(s string) (int64, error) {
	if s == "" {
		return 0, errors.New("empty size")
	}
	digits := len(s) - len(strings.TrimLeft(s, "0123456789"))
	if digits == 0 {
		return 0, fmt.Errorf("size %s does not start with a number", quoteArg(s))
	}
	if digits > 12 {
		return 0, fmt.Errorf("size %s is too large (at most %d bytes)", quoteArg(s), int64(SizeMax))
	}
	n, err := strconv.ParseInt(s[:digits], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %s: %v", quoteArg(s), err)
	}
	shift, err := sizeSuffixShift(s[digits:])
	if err != nil {
		return 0, fmt.Errorf("size %s: %w", quoteArg(s), err)
	}
	if n > SizeMax>>shift {
		return 0, fmt.Errorf("size %s is too large (at most %d bytes)", quoteArg(s), int64(SizeMax))
	}
	return n << shift, nil
}

// sizeSuffixShift maps a size suffix to its power of two.
func sizeSuffixShift(suffix string) (uint, error) {
	switch strings.ToUpper(suffix) {
	case "", "B":
		return 0, nil
	case "K", "KB", "KIB":
		return 10, nil
	case "M", "MB", "MIB":
		return 20, nil
	case "G", "GB", "GIB":
		return 30, nil
	}
	return 0, fmt.Errorf("unknown unit %s (want K, M or G)", quoteArg(suffix))
}

// FormatSize writes n bytes in the shortest exact form ParseSize reads
// back: "64M", "1536K", "8".
func FormatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"G", 30}, {"M", 20}, {"K", 10}} {
		if n > 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}
