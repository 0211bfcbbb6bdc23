// Package topology describes where the ranks of a gocoll job run, and derives
// communication orders from that description.
//
// A [Topology] lists one [RankInfo] per rank: its host, its site (a data
// center, or any group of hosts whose links to other groups are slow), its
// index on its host, the host's network interfaces and its CPU's features.
// The package has four parts, kept apart so that all but the first are pure
// functions of their arguments:
//
//   - Detection ([DetectLocal], in detect.go) reads the local hostname,
//     network interfaces and CPU, and names the machine (boot id and machine
//     id: ranks in network namespaces of one kernel share it) and the cores
//     the process may use. It is the only code that asks the machine.
//   - The model ([Topology], [New], [Topology.Validate] and the lookup
//     methods) checks and queries a topology.
//   - Serialization ([Marshal], [Parse], [Load]) writes a topology as JSON
//     and reads it back strictly, so a job's topology can be dumped once and
//     replayed from a file away from the cluster, as NCCL does with
//     NCCL_TOPO_FILE.
//   - Orders: [RingOrder] lays a ring that leaves every site and every host
//     exactly once; [BinaryTree], [DoubleBinaryTree] and [HierarchicalTree]
//     build reduction trees; [AssignRanks] numbers the slots of a host list
//     so that rank order is already such a ring.
//
// Sites and hosts are ordered by first appearance in increasing rank order,
// never by name, so every result depends only on which rank is where, not on
// the order of [Topology.Ranks].
//
// Limits: a topology has at most [MaxRanks] ranks, a rank at most [MaxNICs]
// interfaces, an interface at most [MaxNICAddrs] addresses, names at most
// [MaxNameBytes] bytes, and a topology file at most [MaxFileBytes] bytes.
package topology
