package scripttest

import "strings"

// maxDiffCells bounds the work of the line diff (lines of want × lines of
// got); larger outputs are shown whole instead.
const maxDiffCells = 1 << 22

// lineDiff renders the differences between want and got line by line:
// unchanged lines start with "  ", removed ones with "- ", added ones with
// "+ ". It uses a longest-common-subsequence alignment.
func lineDiff(want, got string) string {
	a, b := splitLines(want), splitLines(got)
	var out strings.Builder
	emit := func(prefix, line string) {
		out.WriteString(prefix)
		out.WriteString(line)
		out.WriteByte('\n')
	}
	if len(a)*len(b) > maxDiffCells {
		for _, l := range a {
			emit("- ", l)
		}
		for _, l := range b {
			emit("+ ", l)
		}
		return out.String()
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			emit("  ", a[i])
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			emit("- ", a[i])
			i++
		default:
			emit("+ ", b[j])
			j++
		}
	}
	return out.String()
}
