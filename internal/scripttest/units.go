package scripttest

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseInt parses a decimal int with an optional sign and _ separators
// (1_000). Leading zeros do not mean octal.
func ParseInt(s string) (int, error) {
	v, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, strconv.IntSize)
	if err != nil || strings.Contains(s, "__") || strings.HasPrefix(s, "_") || strings.HasSuffix(s, "_") {
		return 0, fmt.Errorf("%q is not an integer", s)
	}
	return int(v), nil
}

// ParseFloat parses a finite float; a trailing % divides it by 100.
func ParseFloat(s string) (float64, error) {
	num, pct := strings.CutSuffix(s, "%")
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%q is not a finite number", s)
	}
	if pct {
		v /= 100
	}
	return v, nil
}

// ParseDuration parses a Go duration (3ms, 200us, 200µs, 1.5s, 1m30s) or a
// plain 0.
func ParseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration like 3ms or 200us", s)
	}
	return d, nil
}

// sizeUnits maps a unit suffix to its multiplier. Decimal units (K, KB, M,
// MB, ...) are powers of 1000, binary ones (KiB, MiB, ...) powers of 1024,
// as in "1G" = 10^9 bytes and "4MiB" = 4<<20.
var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12},
	{"B", 1},
}

// ParseSize parses a non-negative byte count: a decimal number with an
// optional fraction and unit, such as 1500, 1500B, 64KiB, 4MiB, 1.5KiB,
// 1G (10^9) or 2GB. The result must be a whole number of bytes that fits
// in an int64.
func ParseSize(s string) (int64, error) {
	num, mult := s, int64(1)
	for _, u := range sizeUnits {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			num, mult = n, u.mult
			break
		}
	}
	whole, frac, hasFrac := strings.Cut(num, ".")
	if whole == "" || !allDigits(whole) || (hasFrac && (frac == "" || !allDigits(frac))) {
		return 0, fmt.Errorf("%q is not a size like 1500, 64KiB, 4MiB or 1G", s)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > math.MaxInt64/mult {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	total := w * mult
	if hasFrac {
		f, err := fractionBytes(frac, mult)
		if err != nil {
			return 0, fmt.Errorf("size %q: %w", s, err)
		}
		if total > math.MaxInt64-f {
			return 0, fmt.Errorf("size %q is too large", s)
		}
		total += f
	}
	return total, nil
}

// fractionBytes returns 0.frac × mult, which must be a whole number.
func fractionBytes(frac string, mult int64) (int64, error) {
	frac = strings.TrimRight(frac, "0")
	if len(frac) > 18 {
		return 0, fmt.Errorf("too many fraction digits")
	}
	f, _ := strconv.ParseInt("0"+frac, 10, 64)
	scale := int64(1)
	for range len(frac) {
		scale *= 10
	}
	// f/scale × mult, exactly, with mult ≤ 2^40 and f < scale ≤ 10^18:
	// reduce by the gcd first so the product cannot overflow when it is whole.
	g := gcd(mult, scale)
	m, sc := mult/g, scale/g
	if f%sc != 0 {
		return 0, fmt.Errorf("not a whole number of bytes")
	}
	return f / sc * m, nil
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func allDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
