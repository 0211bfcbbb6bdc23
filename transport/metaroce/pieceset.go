package metaroce

import "sort"

// pieceSet is a set of piece indexes kept as sorted, disjoint, non-adjacent
// half-open runs [lo, hi). Its size grows with the number of holes, which
// the senders' windows bound, and not with the length of the message, so a
// peer cannot make the receiver allocate by declaring a huge message.
type pieceSet struct {
	runs []pieceRun
	n    uint64 // indexes in the set
}

type pieceRun struct{ lo, hi uint64 }

// add inserts idx and reports whether it was new.
func (s *pieceSet) add(idx uint64) bool {
	// i is the first run that ends at or after idx.
	i := sort.Search(len(s.runs), func(k int) bool { return s.runs[k].hi >= idx })
	if i < len(s.runs) && s.runs[i].lo <= idx && idx < s.runs[i].hi {
		return false
	}
	s.n++
	switch {
	case i < len(s.runs) && s.runs[i].hi == idx: // extends run i upward
		s.runs[i].hi++
		if i+1 < len(s.runs) && s.runs[i+1].lo == idx+1 {
			s.runs[i].hi = s.runs[i+1].hi
			s.runs = append(s.runs[:i+1], s.runs[i+2:]...)
		}
	case i < len(s.runs) && s.runs[i].lo == idx+1: // extends run i downward
		s.runs[i].lo--
	default:
		s.runs = append(s.runs, pieceRun{})
		copy(s.runs[i+1:], s.runs[i:])
		s.runs[i] = pieceRun{idx, idx + 1}
	}
	return true
}

// has reports whether idx is in the set.
func (s *pieceSet) has(idx uint64) bool {
	i := sort.Search(len(s.runs), func(k int) bool { return s.runs[k].hi > idx })
	return i < len(s.runs) && s.runs[i].lo <= idx
}
