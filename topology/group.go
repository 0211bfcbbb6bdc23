package topology

// GroupBy splits members (ranks) into groups of equal key[r]: the groups in
// the order their first member appears, each group's members in member
// order. key is indexed by rank and must cover every member.
func GroupBy[K comparable](members []int, key []K) [][]int {
	var groups [][]int
	at := map[K]int{}
	for _, r := range members {
		i, ok := at[key[r]]
		if !ok {
			i = len(groups)
			at[key[r]] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], r)
	}
	return groups
}
