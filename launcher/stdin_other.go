//go:build !unix

package launcher

// terminateSelf reports false: there is no SIGTERM to send here, so the
// process exits at once.
func terminateSelf() bool { return false }
