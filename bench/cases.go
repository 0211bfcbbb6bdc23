package bench

import (
	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
)

// testCase is one data type, op and root a collective is measured with
// over every size (nccl-tests runs -d all, -o all and -r all the same
// way: types outermost, then ops, then roots, then sizes).
type testCase struct {
	dt   dtype.DataType
	op   reduce.Op // 0 for collectives that do not reduce
	root int       // -1 for collectives without a root
}

// cases lists what collective k is measured with, over n ranks: the
// plan's types, for a reducing collective each with each of the plan's
// ops it has a kernel for, for a rooted one with each of the plan's roots.
func (p *plan) cases(k collKind, n int) []testCase {
	info := k.info()
	ops := []reduce.Op{0}
	if info.reduces {
		ops = p.ops
	}
	roots := []int{-1}
	if info.rooted {
		roots = p.roots
		if p.allRoots {
			roots = make([]int, n)
			for r := range roots {
				roots[r] = r
			}
		}
	}
	var out []testCase
	for _, dt := range p.dts {
		for _, op := range ops {
			if op != 0 {
				if _, err := kernelLookup(dt, op); err != nil {
					continue // -d all, -o all: the pairs gocoll has a kernel for
				}
			}
			for _, root := range roots {
				out = append(out, testCase{dt: dt, op: op, root: root})
			}
		}
	}
	return out
}

// planChoices are the types, ops and roots Options asks for.
func planChoices(o Options) (dts []dtype.DataType, ops []reduce.Op, roots []int) {
	dts, ops, roots = []dtype.DataType{o.DataType}, []reduce.Op{o.Op}, []int{o.Root}
	if o.AllDataTypes {
		dts = dtype.All()
	}
	if o.AllOps {
		ops = reduce.Ops()
	}
	return dts, ops, roots
}
