package reduce

import "fmt"

// Op is a reduction operation.
type Op uint8

// The supported reduction operations. The zero value is invalid.
const (
	InvalidOp Op = iota
	Sum
	Prod
	Min
	Max
	Avg // Sum followed by division by the number of ranks
	numOps
)

var opNames = [numOps]string{"invalid", "sum", "prod", "min", "max", "avg"}

// Ops lists every valid Op.
func Ops() []Op { return []Op{Sum, Prod, Min, Max, Avg} }

// Valid reports whether o is a supported operation.
func (o Op) Valid() bool { return o > InvalidOp && o < numOps }

func (o Op) String() string {
	if o < numOps {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// ParseOp returns the Op named s ("sum", "prod", "min", "max", "avg").
func ParseOp(s string) (Op, error) {
	for o := Sum; o < numOps; o++ {
		if opNames[o] == s {
			return o, nil
		}
	}
	return InvalidOp, fmt.Errorf("reduce: unknown operation %q (want sum, prod, min, max or avg)", s)
}
