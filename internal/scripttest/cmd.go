package scripttest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Cmd is one block's command as the handler sees it.
type Cmd struct {
	Name  string // the first word of the command line
	Args  []Arg  // the arguments, in order
	Input string // the lines between the command and "----", joined by "\n"
	File  string // the script file
	Line  int    // the command's line in File, 1-based

	used []bool // per Args entry: read by the handler
}

// Arg is one argument of a command line. A bare word has a Key and no Vals;
// key=v has one value; key=(a,b) has a list (possibly empty, for key=()).
type Arg struct {
	Key  string
	Vals []string
}

// String renders the argument as it would be written in a script.
func (a Arg) String() string {
	if a.Vals == nil {
		return quoteIfNeeded(a.Key)
	}
	key := quoteIfNeeded(a.Key)
	if len(a.Vals) == 1 {
		return key + "=" + quoteIfNeeded(a.Vals[0])
	}
	q := make([]string, len(a.Vals))
	for i, v := range a.Vals {
		q[i] = quoteIfNeeded(v)
	}
	return key + "=(" + strings.Join(q, ",") + ")"
}

func quoteIfNeeded(s string) string {
	if s == "" || strings.ContainsAny(s, " \t=(),\"\\") || strconv.Quote(s) != `"`+s+`"` {
		return strconv.Quote(s)
	}
	return s
}

// String renders the command line.
func (c *Cmd) String() string {
	parts := []string{c.Name}
	for _, a := range c.Args {
		parts = append(parts, a.String())
	}
	return strings.Join(parts, " ")
}

// Pos returns "file:line" of the command, for error messages.
func (c *Cmd) Pos() string { return fmt.Sprintf("%s:%d", c.File, c.Line) }

// InputLines returns the input split into lines; nil if there is none.
func (c *Cmd) InputLines() []string {
	if c.Input == "" {
		return nil
	}
	return strings.Split(c.Input, "\n")
}

// Fatalf fails the test with a message prefixed by the command's position
// and name.
func (c *Cmd) Fatalf(t testing.TB, format string, args ...any) {
	t.Helper()
	t.Fatalf("%s: %s: %s", c.Pos(), c.Name, fmt.Sprintf(format, args...))
}

// Lookup returns the last argument with the given key and marks every
// argument with that key read.
func (c *Cmd) Lookup(key string) (Arg, bool) {
	c.ensureUsed()
	var found Arg
	ok := false
	for i, a := range c.Args {
		if a.Key == key {
			found, ok, c.used[i] = a, true, true
		}
	}
	return found, ok
}

// Has reports whether an argument with the given key (bare or not) is
// present, and marks it read.
func (c *Cmd) Has(key string) bool {
	_, ok := c.Lookup(key)
	return ok
}

// Positional returns the bare words among the arguments, in order, and
// marks them read.
func (c *Cmd) Positional() []string {
	c.ensureUsed()
	var words []string
	for i, a := range c.Args {
		if a.Vals == nil {
			words = append(words, a.Key)
			c.used[i] = true
		}
	}
	return words
}

// Unread returns the arguments the handler has not read.
func (c *Cmd) Unread() []Arg {
	c.ensureUsed()
	var unread []Arg
	for i, a := range c.Args {
		if !c.used[i] {
			unread = append(unread, a)
		}
	}
	return unread
}

func (c *Cmd) ensureUsed() {
	if len(c.used) != len(c.Args) {
		c.used = make([]bool, len(c.Args))
	}
}

// values returns the values of key; missing reports whether it is absent.
// It fails the test if the key is a bare word.
func (c *Cmd) values(t testing.TB, key string) (vals []string, missing bool) {
	t.Helper()
	a, ok := c.Lookup(key)
	if !ok {
		return nil, true
	}
	if a.Vals == nil {
		c.Fatalf(t, "argument %s needs a value (%s=...)", key, key)
	}
	return a.Vals, false
}

// one returns the single value of key, failing the test if it is a list.
func (c *Cmd) one(t testing.TB, key string) (string, bool) {
	t.Helper()
	vals, missing := c.values(t, key)
	if missing {
		return "", false
	}
	if len(vals) != 1 {
		c.Fatalf(t, "argument %s: want one value, got %d", key, len(vals))
	}
	return vals[0], true
}

// get parses the single value of key with parse. If key is absent it
// returns def, or fails the test when required.
func get[T any](c *Cmd, t testing.TB, key string, required bool, def T, parse func(string) (T, error)) T {
	t.Helper()
	s, ok := c.one(t, key)
	if !ok {
		if required {
			c.Fatalf(t, "missing argument %s=", key)
		}
		return def
	}
	v, err := parse(s)
	if err != nil {
		c.Fatalf(t, "argument %s: %v", key, err)
	}
	return v
}

// list parses each value of key with parse; a missing key is an empty list.
func list[T any](c *Cmd, t testing.TB, key string, parse func(string) (T, error)) []T {
	t.Helper()
	vals, _ := c.values(t, key)
	out := make([]T, 0, len(vals))
	for i, s := range vals {
		v, err := parse(s)
		if err != nil {
			c.Fatalf(t, "argument %s, item %d: %v", key, i+1, err)
		}
		out = append(out, v)
	}
	return out
}

func parseString(s string) (string, error) { return s, nil }

// Value returns the value of key=value as a string; it fails the test if
// key is missing.
func (c *Cmd) Value(t testing.TB, key string) string {
	t.Helper()
	return get(c, t, key, true, "", parseString)
}

// ValueOr returns the value of key=value, or def if key is absent.
func (c *Cmd) ValueOr(t testing.TB, key, def string) string {
	t.Helper()
	return get(c, t, key, false, def, parseString)
}

// Int returns key=N as an int (decimal, optional sign and _ separators);
// it fails the test if key is missing or not an int.
func (c *Cmd) Int(t testing.TB, key string) int {
	t.Helper()
	return get(c, t, key, true, 0, ParseInt)
}

// IntOr is Int with a default for an absent key.
func (c *Cmd) IntOr(t testing.TB, key string, def int) int {
	t.Helper()
	return get(c, t, key, false, def, ParseInt)
}

// Float returns key=X as a float64; "1.5%" means 0.015.
func (c *Cmd) Float(t testing.TB, key string) float64 {
	t.Helper()
	return get(c, t, key, true, 0, ParseFloat)
}

// FloatOr is Float with a default for an absent key.
func (c *Cmd) FloatOr(t testing.TB, key string, def float64) float64 {
	t.Helper()
	return get(c, t, key, false, def, ParseFloat)
}

// Bool returns key=true or key=false; a bare key means true.
func (c *Cmd) Bool(t testing.TB, key string) bool {
	t.Helper()
	return c.BoolOr(t, key, false)
}

// BoolOr is Bool with a default for an absent key.
func (c *Cmd) BoolOr(t testing.TB, key string, def bool) bool {
	t.Helper()
	if a, ok := c.Lookup(key); ok && a.Vals == nil {
		return true
	}
	return get(c, t, key, false, def, strconv.ParseBool)
}

// Duration returns key=D as a time.Duration, in Go syntax (3ms, 200us,
// 1.5s); a plain 0 is allowed.
func (c *Cmd) Duration(t testing.TB, key string) time.Duration {
	t.Helper()
	return get(c, t, key, true, 0, ParseDuration)
}

// DurationOr is Duration with a default for an absent key.
func (c *Cmd) DurationOr(t testing.TB, key string, def time.Duration) time.Duration {
	t.Helper()
	return get(c, t, key, false, def, ParseDuration)
}

// Size returns key=S as a number of bytes; see ParseSize for the units.
func (c *Cmd) Size(t testing.TB, key string) int64 {
	t.Helper()
	return get(c, t, key, true, 0, ParseSize)
}

// SizeOr is Size with a default for an absent key.
func (c *Cmd) SizeOr(t testing.TB, key string, def int64) int64 {
	t.Helper()
	return get(c, t, key, false, def, ParseSize)
}

// Strings returns the values of key=(a,b) (or key=a); nil-free, empty if
// the key is absent.
func (c *Cmd) Strings(t testing.TB, key string) []string {
	t.Helper()
	return list(c, t, key, parseString)
}

// Ints returns the values of key=(1,2,3) as ints.
func (c *Cmd) Ints(t testing.TB, key string) []int {
	t.Helper()
	return list(c, t, key, ParseInt)
}

// Sizes returns the values of key=(4KiB,1MiB) in bytes.
func (c *Cmd) Sizes(t testing.TB, key string) []int64 {
	t.Helper()
	return list(c, t, key, ParseSize)
}

// Durations returns the values of key=(1ms,2ms).
func (c *Cmd) Durations(t testing.TB, key string) []time.Duration {
	t.Helper()
	return list(c, t, key, ParseDuration)
}
