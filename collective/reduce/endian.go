package reduce

import "unsafe"

// The kernels reinterpret little-endian wire bytes as native integers and
// floats, which is right only on a little-endian host. endian_big.go stops
// the build on the big-endian architectures Go knows; this check catches
// any other.
func init() {
	probe := uint16(1)
	if *(*byte)(unsafe.Pointer(&probe)) != 1 {
		panic("reduce: this host is big-endian; gocoll's reduction kernels need a little-endian host")
	}
}
