//go:build !linux

package main

import (
	"errors"
	"time"
)

func receiveBatched(string, int, time.Duration, time.Duration) error {
	return errors.New("-batchwait: Linux only")
}

func nap(d time.Duration) { time.Sleep(d) }
