//go:build !amd64

package crc32c

// useFold is false: only amd64 has the folding code.
const useFold = false

func updateFold(crc uint32, p []byte) uint32 { panic("crc32c: no folding on this architecture") }
