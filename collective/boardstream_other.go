//go:build !amd64 || race

package collective

// streamCopy copies src into dst (at least as long): a plain copy here
// (the race detector does not see assembly's stores).
func streamCopy(dst, src []byte) { copy(dst, src) }
