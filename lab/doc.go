// Package lab builds emulated networks of several sites, hosts and
// parallel paths on one Linux machine, in network namespaces: gocoll's one
// way to build a lab, behind `gocoll lab` and the tests that need hosts
// apart.
//
// A lab of S sites (2 to 4) has in each site a router namespace "sSr"
// whose bridge "lan" (10.S.0.1/24) joins the site's hosts "sShH"
// (10.S.0.(10+H), default route via the router). Every pair of sites A < B
// is joined by Paths veth links (a full mesh of routers; path I of the
// pair numbered k is 10.(100+k).I.1 in A and .2 in B, named "sBpI" in A's
// router and "sApI" in B's). Each router routes another site over its
// paths as one ECMP route hashed on the 5-tuple
// (fib_multipath_hash_policy=1), so flows with different ports take
// different paths; [Lab.Route] says which. Namespaces are named
// "<lab>-<node>", so labs of different names run at once; state is kept in
// StateRoot/<lab>/. Nothing outside the lab's namespaces is changed, but
// for one machine-wide switch: while a delay daemon runs, the kernel stamps
// received packets with their arrival time (the daemon's socket asks for
// it; the kernel turns it off when the last such socket closes).
//
// Each direction of a path is emulated at the egress of its router (Fwd:
// from the lower-numbered site): a token bucket (tc tbf) for the rate; in
// an iptables chain of the mangle table, a random DROP for loss, a DROP
// for a silent cut, and an NFQUEUE to the router's delay daemon for delay
// and jitter (this kernel has no netem). While a path has loss, the
// hosts send GSO trains as separate datagrams (gso_max_segs 1, as a NIC
// segments before the wire), so that the loss falls on each datagram, not
// on whole trains.
//
// A rate-limited path serves one DSCP first, Spec.PriorityDSCP (default
// CS6, the class MetaRoCE marks its ACKs, probes and handshakes with:
// mrtransport.Config.ControlDSCP), as a DiffServ router serves network
// control, so that ACKs do not wait behind the other direction's data: the
// path's chain classifies packets of that DSCP to priority 7 and all others
// to 0 (iptables CLASSIFY), and under the token bucket a pfifo_fast serves
// priority 7 strictly first (this kernel has no prio or ets qdisc); its
// bands hold txqueuelen packets each, set to the bucket's limit in
// full-MTU packets. [PathStats].PrioPackets counts the packets the band
// took. The band is strict and has no rate of its own: the lab assumes,
// as a DiffServ network does of network control, that only small control
// packets carry that DSCP; traffic that marks its data with it starves
// the path's other traffic. A later rate change of a path keeps the data
// band's first length (pfifo_fast sizes its bands when it is made).
// PriorityDSCP -1 leaves the token bucket's one byte-limited FIFO.
// The delay daemon needs no class of its own: it is a delay line, not a
// rate queue (each packet leaves at its arrival plus its delay, whatever
// is held), its verdict leaves the packet and its mark as they were, and
// the classification, made before it, stays with the packet to the
// bucket. The daemon, [DelaydMain], is
// gocoll itself (`gocoll lab delayd`), started only when a path has delay
// or jitter; its one loop runs as a real-time thread (SCHED_FIFO, where
// permitted) so that it releases packets on time on a loaded
// machine, and with GOCOLL_DELAYD_TRACE=FILE it writes a per-packet trace
// (arrival, due and release times) on SIGUSR1. A carrier cut sets the link down: the routers move its flows
// (and, rehashing, some others) to the other paths.
//
// [Lab.Down] kills every process left in the lab's namespaces and deletes
// them, and with them every interface, route, qdisc and rule; then its
// state. [Lab.Do] runs a function in a host's namespace, so a test can open
// sockets there from its own process.
//
// Everything that changes namespaces needs root ([ErrNotRoot]); where
// namespaces cannot be made, [Up] fails with [ErrUnavailable].
package lab
