//go:build race

package transporttest

// raceOn: the race detector makes sync.Pool drop objects at random, so
// allocation counts mean nothing under it.
const raceOn = true

// RaceSlowdown scales wait bounds under the race detector, which runs a
// transport several times slower (an 8 MiB message in 1452-byte datagrams
// over MetaRoCE's endpoint reader outlived 10 s under -race at load
// 30-40): the suite's (waitTimeout), and transports' own tests'.
const RaceSlowdown = 3
