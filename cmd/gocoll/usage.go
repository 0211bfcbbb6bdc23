package main

import (
	"flag"
	"fmt"
	"io"
)

// usageError marks bad input: the command exits with exitUsage.
type usageError struct{ error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// parseLabFlags parses args with fs, flags and positional arguments in any
// order up to "--", and returns the positional ones, then those after
// "--".
func parseLabFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	args, after, _ := cutDashes(args)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, usageError{err}
		}
		if args = fs.Args(); len(args) == 0 {
			return append(pos, after...), nil
		}
		pos, args = append(pos, args[0]), args[1:]
	}
}

// cutDashes splits args at the first "--".
func cutDashes(args []string) (before, after []string, found bool) {
	for i, a := range args {
		if a == "--" {
			return args[:i], args[i+1:], true
		}
	}
	return args, nil, false
}
