//go:build !linux

package affinity

import "errors"

// errUnsupported is Bind's and Threads' error where the process cannot be
// bound.
var errUnsupported = errors.New("binding to CPUs is only supported on Linux")

// Cores is nil here: the launcher cannot bind, and --bind-to core is an
// error (see Pick).
func Cores() [][]int { return nil }

// Bind fails: only Linux binds.
func Bind([]int) error { return errUnsupported }

// Threads fails: only Linux binds.
func Threads() (map[int][]int, error) { return nil, errUnsupported }

// Union fails: only Linux reads affinity masks.
func Union([]int) (int, error) { return 0, errUnsupported }
