//go:build !race

package transporttest

const raceOn = false

// raceSlowdown is 1 without the race detector (see race.go).
const raceSlowdown = 1
