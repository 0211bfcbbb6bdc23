//go:build !race

package transporttest

const raceOn = false
