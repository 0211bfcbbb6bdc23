package collective

import (
	"fmt"
	"unsafe"

	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
)

// reduceSpec is a resolved (data type, operation) pair with its kernel.
type reduceSpec struct {
	dt     dtype.DataType
	op     reduce.Op
	kernel reduce.Kernel
}

func lookupReduce(dt dtype.DataType, op reduce.Op) (reduceSpec, error) {
	k, err := reduce.Lookup(dt, op)
	if err != nil {
		return reduceSpec{}, err
	}
	return reduceSpec{dt: dt, op: op, kernel: k}, nil
}

// esize is dt's element size, or 1 for an invalid type (whose calls fail
// validation; this only keeps arithmetic on them safe).
func esize(dt dtype.DataType) int { return max(1, dt.Size()) }

// checkType reports an invalid data type.
func checkType(dt dtype.DataType) error {
	if !dt.Valid() {
		return fmt.Errorf("invalid data type %v", dt)
	}
	return nil
}

// checkLen reports a buffer whose length is not want bytes.
func checkLen(name string, b []byte, want int, dt dtype.DataType) error {
	if len(b) != want {
		if b == nil {
			return fmt.Errorf("%s buffer is nil, want %d elements of %v", name, want/esize(dt), dt)
		}
		return fmt.Errorf("%s buffer has %d bytes, want %d (%d elements of %v)", name, len(b), want, want/esize(dt), dt)
	}
	return nil
}

// checkWhole reports a byte buffer that is not a whole number of elements.
func checkWhole(name string, b []byte, dt dtype.DataType) error {
	if len(b)%esize(dt) != 0 {
		return fmt.Errorf("%s buffer has %d bytes, not a whole number of %d-byte %v elements", name, len(b), esize(dt), dt)
	}
	return nil
}

// checkRoot reports a root outside the communicator.
func checkRoot(root, size int) error {
	if root < 0 || root >= size {
		return fmt.Errorf("root %d out of range [0, %d)", root, size)
	}
	return nil
}

// checkAlias reports buffers that overlap without being the same region
// (the in-place forms pass the very same region; anything else is a bug).
func checkAlias(aName string, a []byte, bName string, b []byte) error {
	if overlaps(a, b) {
		return fmt.Errorf("%s and %s buffers overlap without being the same region (in place means passing the same slice)", aName, bName)
	}
	return nil
}

// overlaps reports whether a and b overlap without being the same region
// (what checkAlias refuses), as a plain test: the lean Broadcast's.
func overlaps(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 || sameRegion(a, b) {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	return pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}

// sameRegion reports whether a and b are the same memory (in-place call).
func sameRegion(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// asBytes views a typed slice as its bytes, without copying.
func asBytes[T any](s []T) []byte {
	if len(s) == 0 {
		if s == nil {
			return nil
		}
		return []byte{}
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
}
