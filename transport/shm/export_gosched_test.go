//go:build linux

package shm

// GoschedEvery exposes e.goschedEvery to the package's external tests.
func GoschedEvery(e *Endpoint) int { return e.goschedEvery }

// SpinGoschedEveryAlone exposes spinGoschedEveryAlone to the external tests.
const SpinGoschedEveryAlone = spinGoschedEveryAlone
