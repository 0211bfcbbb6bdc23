//go:build !unix

package main

import "errors"

// rusageSupported refuses to run: the peak RSS this command measures comes
// from getrusage, which this system does not have.
func rusageSupported() error {
	return errors.New("measuring peak RSS (getrusage) is supported on Linux and macOS only")
}

// peakMiB is never reached here (rusageSupported).
func peakMiB() float64 { return 0 }
