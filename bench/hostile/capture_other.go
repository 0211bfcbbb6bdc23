//go:build !linux

package main

import "math/rand/v2"

// capture is Linux's only (AF_PACKET); elsewhere nothing is captured.
type capture struct{}

func newCapture(lo, hi, own int) *capture                  { return &capture{} }
func (c *capture) pick(rng *rand.Rand) ([]byte, int, bool) { return nil, 0, false }
func (c *capture) count() int                              { return 0 }
