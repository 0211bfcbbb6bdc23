package topology

// HierarchicalTree returns a tree over the ranks of t in three levels:
//
//   - the site leaders ([Topology.SiteLeaders], the lowest rank of each
//     site) form a binary tree in the order of [Topology.Sites], rooted at
//     the leader of the first site, which is rank 0;
//   - on each site, the host leaders (the lowest rank of each host) form a
//     binary tree in the order of [Topology.HostsOnSite], rooted at the site
//     leader;
//   - on each host, its ranks form a binary tree in increasing order, rooted
//     at the host leader.
//
// Each level is a heap-shaped binary tree: the i-th member (from 0) is the
// parent of members 2i+1 and 2i+2. So the only edges between sites join site
// leaders, and there are S-1 of them for S sites; the only edges between
// hosts join host leaders, H-1 of them for H hosts. Both counts are the
// fewest any spanning tree can have. The depth is at most
// floor(log2 S) + floor(log2 h) + floor(log2 k), where h is the most hosts on
// a site and k the most ranks on a host. A rank's children are listed
// level by level: other sites first, then other hosts, then its own host, so
// a reduction can start on the slowest links first.
//
// HierarchicalTree returns an error wrapping ErrInvalid if t is not valid.
func HierarchicalTree(t Topology) (Tree, error) {
	if err := t.Validate(); err != nil {
		return Tree{}, err
	}
	l := buildLayout(t)
	tr := newTree(t.Size(), 0)
	hostLeader := func(host string) int { return l.ranksOfHost[host][0] }

	siteLeaders := make([]int, len(l.sites))
	for i, site := range l.sites {
		siteLeaders[i] = hostLeader(l.hostsOfSite[site][0])
	}
	linkHeap(&tr, siteLeaders)
	for _, site := range l.sites {
		hosts := l.hostsOfSite[site]
		leaders := make([]int, len(hosts))
		for i, host := range hosts {
			leaders[i] = hostLeader(host)
		}
		linkHeap(&tr, leaders)
	}
	for _, host := range l.hosts {
		linkHeap(&tr, l.ranksOfHost[host])
	}
	return tr, nil
}

// linkHeap links members[1:] below members[0] as a heap-shaped binary tree.
func linkHeap(tr *Tree, members []int) {
	for i := 1; i < len(members); i++ {
		tr.link(members[(i-1)/2], members[i])
	}
}
