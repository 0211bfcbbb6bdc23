//go:build race

package mrtransport

// raceSlowdown scales the tests' wait bounds (testWait): the race detector
// runs this package's engines several times slower, and a loaded CI
// machine slower again (TestStormCollectiveLoopback took 16 s of its 20 s
// under -race at load 13, and failed 3 of 3 at load 20-30).
const raceSlowdown = 3
