//go:build !race

package transporttest

const raceOn = false

// RaceSlowdown is 1 without the race detector (see race.go).
const RaceSlowdown = 1
