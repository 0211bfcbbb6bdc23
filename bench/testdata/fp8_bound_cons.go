// Part of bench/fp8_bound.sh's probe (copied into its package; under
// testdata, not built with the module).

package probe

import "encoding/binary"

var (
	cons      [672]byte
	scratch16 [1024]byte
)

func init() {
	d := func(off int, v uint32) {
		for i := range 8 {
			binary.LittleEndian.PutUint32(cons[off+4*i:], v)
		}
	}
	b := func(off int, v byte) {
		for i := range 32 {
			cons[off+i] = v
		}
	}
	d(0, 0x87ffffff)  // E4M3 widening mask
	d(32, 0x8fffffff) // E5M2
	for i, v := range []uint32{0, 4, 1, 5, 2, 6, 3, 7} {
		binary.LittleEndian.PutUint32(cons[64+4*i:], v)
	}
	b(96, 0x7f)
	d(128, 1)
	d(160, 0xfffff)  // E4M3 rounding (doubled magnitude)
	d(192, 0x1fffff) // E5M2
	b(224, 0x7e)
	b(256, 0x7c)
	b(288, 0x80)
	b(320, 0x7b)
	d(352, 1<<20)
	d(384, 1<<21)
	d(416, 0x7b800000) // 2^120
	d(448, 0x77800000) // 2^112
	d(480, 0x00010001) // completeF16C: word 1
	d(512, 0x007f007f) // word 0x7f
	d(544, 0xff00ff00) // completeE4M3F16CPipe: upper bytes
	d(576, 0x80008000) // sign16: VPMADDUBSW's 128 in the odd bytes
	d(608, 0x00800080) // sign8: in the even bytes
	d(640, 0xbfffbfff) // bit 14 cleared
}
