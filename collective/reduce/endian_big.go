//go:build armbe || arm64be || m68k || mips || mips64 || mips64p32 || ppc || ppc64 || s390 || s390x || shbe || sparc || sparc64

package reduce

// gocoll's reduction kernels view little-endian bytes as native values and
// need a little-endian host; this undefined name stops the build here.
var _ = reduceKernelsNeedALittleEndianHost
