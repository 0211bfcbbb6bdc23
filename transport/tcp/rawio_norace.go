//go:build !race

package tcp

// beforeRawWrite and afterRawRead tell the race detector about data moving
// through the kernel (rawio_race.go); without it they do nothing.
func beforeRawWrite() {}

func afterRawRead() {}
