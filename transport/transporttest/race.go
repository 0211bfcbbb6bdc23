//go:build race

package transporttest

// raceOn: the race detector makes sync.Pool drop objects at random, so
// allocation counts mean nothing under it.
const raceOn = true

// raceSlowdown scales the suite's wait bound (waitTimeout) under the race
// detector.
const raceSlowdown = 3
