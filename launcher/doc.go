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
// gocoll run does for local jobs). GOCOLL_JOB_KEY is the store's secret;
// without it the key is derived from the job id, which keeps jobs apart but
// is no secret.
//
// Under every launcher these variables apply too:
//
//	GOCOLL_SITE               this rank's site
//	GOCOLL_HOST               its host name in the topology (default: the kernel's)
//	GOCOLL_ADDR               the IP the transport listens on (default: this host's address on the route to the store)
//	GOCOLL_TRANSPORT          auto (the default): shared memory within a host, MetaRoCE between hosts;
//	                          shm+tcp: shared memory and TCP; tcp, metaroce or shm alone
//	GOCOLL_DEBUG              info, debug or trace: log to stderr at that level
//	GOCOLL_SPIN_WAIT          shared memory and MetaRoCE: how long a wait polls before it sleeps
//	                          (default 200us on shared memory, 50us on MetaRoCE; 0 never)
//	GOCOLL_PEER_TIMEOUT       MetaRoCE: a peer silent on every path this long, while an operation waits
//	                          on it, fails that operation naming it (default 2s; 100ms to 1h)
//	GOCOLL_HEARTBEAT_TIMEOUT  a rank whose store heartbeat stands still this long is dead (default 30s)
//	GOCOLL_CONNECT_TIMEOUT    bound on forming the world (default 120s)
//
// Every variable is checked before the rank joins: a bad value is a
// one-line error naming it. gocoll run also sets GOCOLL_WATCH_STDIN=1 for
// the ranks it starts remotely: the rank then ends (SIGTERM, then exit
// status 143 five seconds later) when its stdin closes, which means the
// launcher or the ssh connection to it is gone. This package's env.go is
// the only code of gocoll that reads environment variables.
//
// # Health
//
// Every rank adds to a heartbeat counter in the store every
// GOCOLL_HEARTBEAT_TIMEOUT/10 and watches the others'. A rank whose counter
// stands still for the timeout, and that did not leave with Close, is
// declared dead: its peers' pending operations fail at once with an error
// naming it (a *transport.PeerError wrapping [ErrNoHeartbeat]), and so do
// later ones, instead of hanging until the collective's deadline. A rank
// that exits or is killed is noticed sooner, by the transport, when its
// connections break.
//
// When a rank aborts an operation it also records why in the store, before
// its error reaches the program. A peer whose connection to it then breaks
// (because the program exited on that error) adds that record to its own
// error, so that every rank's error names the rank that failed first, not
// just the neighbour that gave up on it. Each rank watches every other's
// heartbeat: n reads of the store per rank per GOCOLL_HEARTBEAT_TIMEOUT/10.
package launcher
