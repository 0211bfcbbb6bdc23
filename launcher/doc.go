// Package launcher is the rank side of starting a gocoll job: [Init] reads
// the environment a launcher left, meets the other ranks at the rendezvous
// store ([github.com/gocoll/gocoll/launcher/store]), connects the transport
// and returns the [World]: the world communicator and the topology. The
// same program starts unchanged under gocoll run, mpirun, srun and torchrun
// (or by hand):
//
//	world, err := launcher.Init(ctx, launcher.Options{}) // gocoll.Init(ctx)
//	if err != nil {
//		log.Fatal(err) // one line: what is wrong, what to set
//	}
//	defer world.Close()
//	err = collective.AllReduce(ctx, world.Comm, grad, grad, collective.Sum)
//
// # Environment
//
// The first launcher whose variables are present wins:
//
//	launcher     rank, size, local rank                                store (where GOCOLL_STORE is unset)
//	gocoll       GOCOLL_RANK, GOCOLL_WORLD_SIZE, GOCOLL_LOCAL_RANK     127.0.0.1:<derived>
//	Open MPI     OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK              127.0.0.1:<derived> on one host; else set GOCOLL_STORE
//	torchrun     RANK, WORLD_SIZE, LOCAL_RANK                          MASTER_ADDR:MASTER_PORT (MASTER_ADDR:<derived> when
//	                                                                   torchrun's agent holds MASTER_PORT)
//	Slurm        SLURM_PROCID, SLURM_STEP_NUM_TASKS, SLURM_LOCALID     127.0.0.1:<derived> on one node; else the first
//	                                                                   node of SLURM_STEP_NODELIST:<derived>
//
// <derived> is a port in [20000, 32000) hashed from the job id (GOCOLL_JOB_ID,
// or the launcher's: OMPI_MCA_ess_base_jobid, SLURM_JOB_ID.SLURM_STEP_ID,
// TORCHELASTIC_RUN_ID), so every rank computes the same one. Rank 0 serves
// the store there (GOCOLL_STORE_SERVE=0 says another process serves it, as
// gocoll run does for local jobs). GOCOLL_JOB_KEY is the job's secret, 16
// to 1024 printable ASCII characters, the same on every rank: the store and
// the transports' handshakes check that each rank holds it, without it
// crossing the wire. gocoll run generates one per job and gives it to local
// ranks in their environment and to remote ones on the first line of their
// stdin (GOCOLL_JOB_KEY_STDIN=1), never on a command line. Under another
// launcher, export it without putting it on a command line
// (GOCOLL_JOB_KEY=... mpirun -x GOCOLL_JOB_KEY ...). A job without it
// fails in one line, unless GOCOLL_INSECURE=1, which runs under a
// well-known key that keeps no one out, and only with the store on
// loopback (one host).
//
// Under every launcher these variables apply too:
//
//	GOCOLL_SITE               this rank's site
//	GOCOLL_HOST               its host name in the topology (default: the kernel's)
//	GOCOLL_ADDR               the IP the transport listens on (default: this host's address on the route to the store)
//	GOCOLL_TRANSPORT          auto (the default): shared memory within a host, MetaRoCE between hosts;
//	                          shm+tcp: shared memory and TCP; tcp, metaroce or shm alone
//	GOCOLL_DEBUG              info, debug or trace: log to stderr at that level; from info on, each
//	                          rank logs the link figures of each level and where they came from
//	                          (file, probe, cache or default), the transport to each peer, and at
//	                          close its traffic per peer and per MetaRoCE path (World.Stats gives the
//	                          same figures)
//	GOCOLL_DEBUG_SUBSYS       which of GOCOLL_DEBUG's lines below a warning print, as NCCL_DEBUG_SUBSYS:
//	                          a comma-separated list of INIT (forming: transports, chunk sizes, kernels,
//	                          GOMAXPROCS), NET (the transports' lines, traffic at close), COLL (one line
//	                          per collective: algorithm, bytes, time) or ALL; ^ first excludes
//	                          (default INIT,NET)
//	GOCOLL_SPIN_WAIT          shared memory and MetaRoCE: how long a wait polls before it sleeps
//	                          (default 200us on shared memory, 1ms on its collectives' boards, 50us on
//	                          MetaRoCE; set, it bounds the boards' waits too; 0 never)
//	GOCOLL_PEER_TIMEOUT       MetaRoCE: a peer silent on every path this long, while an operation waits
//	                          on it, fails that operation naming it (default 2s; 100ms to 1h)
//	GOCOLL_UDP_PROBE_TIMEOUT  MetaRoCE: a pair of ranks whose handshake is not done this long after
//	                          connecting starts has UDP blocked between them (default 5s; 100ms to 10m)
//	GOCOLL_PATHS              MetaRoCE: the paths (UDP sockets, each its own source port for the
//	                          fabric's ECMP hash) every connection of a rank sprays over, 1 to 256
//	                          (default 8); a connection takes the smaller of its two ranks' numbers,
//	                          so set it alike on every rank
//	GOCOLL_UDP_PORTS          MetaRoCE: the UDP ports its path sockets bind, for firewalls, like
//	                          50000-50999: at least GOCOLL_PATHS (8, one per path) for each rank of a
//	                          host (default: ephemeral ports)
//	GOCOLL_PATH_IFACES        MetaRoCE: each path's interface or local IP address, path i taking entry
//	                          i mod their number, like eth0,eth1 (default: every path on GOCOLL_ADDR)
//	GOCOLL_ARRIVAL_TIMES      MetaRoCE: 1 hands its core each datagram's kernel receive time stamp
//	                          (SO_TIMESTAMPNS), so that the delay signal leaves the receiver's
//	                          scheduling out; 0 not (default 1)
//	GOCOLL_MR_COALESCE        MetaRoCE: after a read that heard only far peers (lowest RTT at least 4
//	                          times it), the endpoint reader sleeps this long before it reads again,
//	                          one wake-up for many WAN datagrams (like 1ms; up to 10ms; 0 off;
//	                          default: 1ms where a rank runs with GOMAXPROCS 1 once fitted, else off)
//	GOCOLL_MR_SAMPLES         MetaRoCE, a diagnostic: a file name; every millisecond each rank records
//	                          what holds each busy connection's posted data back (credit, window,
//	                          pacing, the peer's rate, a late driver) and writes it at close to that
//	                          name, a dot and its rank appended (default: off)
//	GOCOLL_AUTH               with the job key, what each MetaRoCE datagram's and TCP frame's keyed tag
//	                          covers: header (the default: everything but the payload, with a packet
//	                          number against replays) or full (the payload too)
//	GOCOLL_ENCRYPT            MetaRoCE and TCP: off (the default), sites (AES-GCM between ranks of
//	                          different sites) or all; nothing is authenticated or encrypted under
//	                          GOCOLL_INSECURE=1
//	GOCOLL_ALGO               forced algorithms, like NCCL_ALGO: tree (every collective that has it)
//	                          or allreduce:hierarchical,broadcast:chain (default: the cost model's
//	                          choice where the job spans hosts, else by size)
//	GOCOLL_PROBE              the link figures of the cost model's choice: unset, where the job spans
//	                          hosts, measure as the world forms each level (host, site, wan) that
//	                          GOCOLL_TOPO_FILE or GOCOLL_LINKS does not give (a few ping-pongs and
//	                          4 MiB transfers per level, the WAN's on a second pair and then on all
//	                          its pairs at once; the same figures on every rank; about 0.8 s on the
//	                          two-site lab of 2 ms); 0 never (assumed figures); 1 even on
//	                          one host. Alike on every rank
//	GOCOLL_TOPO_FILE          a topology file (version 2: "levels" and "links") whose link figures the
//	                          job takes; rank 0 reads it
//	GOCOLL_TOPO_DUMP          rank 0 writes the job's topology with the figures the cost model uses
//	                          there, as a version 2 file that GOCOLL_TOPO_FILE reads back
//	GOCOLL_LINKS              figures per level taken as measured, like wan=2ms@1e8,site=25us@1.25e9
//	                          (latency one way @ bytes/s): gocoll run sets it for a restarted round
//	                          from the first round's (the job's cache), so it does not probe again
//	GOCOLL_DETERMINISTIC      1: AllReduce reduces in rank order, bitwise the same whatever algorithm
//	                          or chunk size (collective.Config.Deterministic; default 0)
//	GOCOLL_CHANNELS           ring AllReduce (trees) on this many rings (pairs of trees) at once, each on a part of the buffer
//	                          (collective.Config.Channels, 1 to 16; default 1)
//	GOCOLL_HEARTBEAT_TIMEOUT  a rank whose store heartbeat stands still this long is dead (default 30s)
//	GOCOLL_CONNECT_TIMEOUT    bound on forming the world (default 120s)
//	GOCOLL_TIMEOUT            bound on each collective operation, which then fails (default 10m)
//	GOCOLL_STALL_TIMEOUT      an operation running this long is reported on stderr, naming the rank
//	                          that never arrived or the one it waits on, and goes on (default 30s)
//
// Every variable is checked before the rank joins: a bad value is a
// one-line error naming it. gocoll run also sets GOCOLL_WATCH_STDIN=1 for
// the ranks it starts remotely: the rank then ends (SIGTERM, then exit
// status 143 five seconds later) when its stdin closes, which means the
// launcher or the ssh connection to it is gone; under --bind-to core it
// sets GOCOLL_BIND_CORE=I/N for them too, and the rank binds every thread
// of its process to the I-th of its host's N ranks' cores as it joins
// (see BindCore). This package's env.go is
// the only code of gocoll that reads environment variables.
//
// # Where UDP is blocked
//
// MetaRoCE connects with a probe: every rank connects to every other
// within GOCOLL_UDP_PROBE_TIMEOUT, then publishes in the store the ranks
// it did not reach and reads everyone's, so the ranks of each pair agree:
// a pair is blocked if either failed to reach the other (a firewall may
// drop one direction only). With auto (the default), every rank also
// listens on TCP; if any pair is blocked, all ranks connect TCP, each
// blocked pair talks over it, the other pairs keep MetaRoCE and shared
// memory, and each rank of a blocked pair prints one line on stderr:
//
//	gocoll: rank 1: UDP to rank 2 (10.1.0.12) is blocked (no MetaRoCE handshake within 5s): using TCP for that pair
//
// The World's Job then names the transport shm+metaroce+tcp (or
// metaroce+tcp). With GOCOLL_TRANSPORT=metaroce, every rank fails instead
// with one line naming the blocked pairs:
//
//	gocoll: rank 0 of 8 (gocoll): connecting the metaroce transport: UDP is blocked between rank 1 (10.1.0.11)
//	and rank 4 (10.1.0.12): no MetaRoCE handshake within 5s (GOCOLL_UDP_PROBE_TIMEOUT); open UDP between
//	those hosts (GOCOLL_UDP_PORTS chooses the ports), or leave GOCOLL_TRANSPORT unset to use TCP for
//	such pairs
//
// (one line, folded here). Where UDP flows, the handshakes end at once and
// the probe adds one exchange through the store to forming the world.
//
// # Health
//
// Every rank adds to a heartbeat counter in the store every
// GOCOLL_HEARTBEAT_TIMEOUT/10 and watches the others'. A rank whose counter
// stands still for the timeout, and that did not leave with Close, is
// declared dead: its peers' pending operations fail at once with an error
// naming it (a *transport.PeerError wrapping [ErrNoHeartbeat]), and so do
// later ones, instead of hanging until the collective's deadline. This is
// what names a stopped process (SIGSTOP) over TCP and shared memory, whose
// connections stay open. A rank that exits or is killed is noticed sooner,
// by the transport, when its connections break (over MetaRoCE, by the ICMP
// port unreachable its next datagram draws); and over MetaRoCE a peer that
// answers nothing on any path (stopped, its host vanished, every path cut)
// fails the operations waiting on it at GOCOLL_PEER_TIMEOUT, naming it.
//
// When a rank aborts an operation it also records why in the store, before
// its error reaches the program (waiting at most a quarter second for a
// store that does not answer, as one behind a network cut). A peer whose
// connection to it then breaks (because the program exited on that error)
// adds that reason to its own error: the reason of the latest abort it
// heard from that rank, else the record in the store. So every rank's
// error names the rank that failed first, not just the neighbour that gave
// up on it, even where the store is out of reach. Each rank watches every
// other's heartbeat: n reads of the store per rank per
// GOCOLL_HEARTBEAT_TIMEOUT/10.
//
// While the world forms, the same holds: a rank whose Init fails (its
// context cancelled, as on Ctrl-C in a program using signal.NotifyContext,
// or an error of its own; not one that ran out of time, which blames
// nobody: each rank then says what it missed, but for rank 0 serving the
// store, whose store goes with it: its note says what it missed), that
// aborts, or that closes its world before every
// other rank's goodbye notes in the store that it left, and the ranks
// still forming the world fail at once with an error naming it (wrapping
// [ErrRankLeft] and its reason). Ranks that have not come, or were
// killed before they could say so, are waited for until
// GOCOLL_CONNECT_TIMEOUT (gocoll run, mpirun and srun stop the job when a
// rank dies).
//
// # Abort and Shrink
//
// World.Abort (collective.Comm.Abort) ends every pending operation of the
// world on every rank and leaves the job at once: heartbeat and watcher
// stop, the transport and the store connection close (the serving rank
// closes the store), with no wait for the others' goodbyes, and nothing
// of the world is left. World.Shrink (collective.Comm.Shrink) gives the
// survivors of a failure one communicator without the failed ranks: the
// union of the ranks the callers name and those the watcher declared
// dead on any survivor, agreed through the job's store (under comm/). It
// runs over the world's transport; close it before the world. Under gocoll
// run --on-failure continue the survivors are not stopped, so they can
// shrink and go on. A world whose store is gone (its serving rank died)
// cannot shrink.
//
// # Limits
//
// What a world keeps is bounded; the store (launcher/store), the
// communicators (collective) and the transports bound theirs in their own
// package docs:
//   - a rank's record in the store (address, host, site, topology): 256 KiB
//   - a flight record a rank leaves in the store for a hang report: 64 KiB,
//     the oldest operations dropped until it fits
//   - a failure note (why a rank aborted): 1 KiB
//   - the operations an endpoint remembers, to abort when a rank is
//     declared dead: the latest 256; the communicators whose members it
//     knows (so a shrunk one survives that declaration): the latest 64
//   - ranks that each hold a wait on the store for the next hang-report
//     request: jobs of at most 1024 ranks (the store's waits are bounded);
//     larger jobs look for requests at each heartbeat instead
//   - blocked pairs named by the UDP-blocked notice or error: 4
package launcher
