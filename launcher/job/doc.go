// Package job is the launcher side of gocoll run: it starts the ranks of a
// job on this host and on remote ones, shows their output, and ends the
// job as a whole.
//
// [Run] numbers the slots of the host list site by site, then host by host
// (topology.AssignRanks), and starts rank r with the gocoll variables
// (GOCOLL_RANK, GOCOLL_WORLD_SIZE, GOCOLL_LOCAL_RANK, GOCOLL_HOST,
// GOCOLL_SITE, GOCOLL_ADDR, GOCOLL_STORE, GOCOLL_JOB_ID, GOCOLL_JOB_KEY...)
// that launcher.Init reads. Ranks on this host are started by fork and exec
// with the launcher's environment; the others through Spec.Rsh (ssh by
// default; 'ip netns exec {host}' starts ranks in network namespaces), as
// `rsh-words env VARS... PROG ARGS...`.
//
// The store. When every rank is local the launcher serves the rendezvous
// store on loopback. Otherwise the launcher may be unreachable from the
// ranks (a login node behind a firewall), so rank 0 serves the store at its
// host's address on a port derived from the job id, and the launcher
// follows the job through its child processes; it dials that store only
// for hang reports, and a job goes on without them if it cannot.
//
// Output. Every line a rank writes is copied, whole, to the launcher's
// stdout or stderr with the prefix "[rank N] " (lines longer than 64 KiB in
// pieces; no prefix with Spec.Untagged), or with Spec.OutputDir to the
// files rank.N.stdout and rank.N.stderr. A line of stdout that is a JSON
// object goes without prefix: the prefix is for text, and JSON output (one
// object a line, as gocoll bench --json prints from rank 0) stays
// machine-readable under gocoll run as under mpirun or srun, which add no
// prefix by default. The last Spec.TailLines lines of each rank are kept for the
// report.
//
// Failure. Each process started here leads a process group of its own and
// dies with the launcher (PR_SET_PDEATHSIG). When a rank exits non-zero or
// is killed (for a remote rank: when its rsh command does, as ssh does when
// the connection drops), the others have Spec.Grace to end on their own
// (their collectives fail with errors naming the dead rank, which they
// print); then they get SIGTERM, and a remote rank's stdin is closed (which
// launcher.Init watches for); after Spec.KillAfter, SIGKILL. Run returns
// once every process has been reaped, so nothing it started is left
// running, and [Result.Report] names the rank that failed first, its host,
// its exit status and its last lines of output. Signals delivered on
// Spec.Signals are forwarded to every rank's process group, but SIGUSR1.
//
// Hang reports. The launcher asks every rank for its flight record through
// the job's store (launcher.RequestFlightRecords, waiting Spec.DiagnoseWait
// at most) and prints one report (see [Hang]): when a rank's operation
// passes its stall threshold (GOCOLL_STALL_TIMEOUT; the rank posts a
// notice, and prints the report's headline the launcher answers it with),
// when Spec.Timeout passes (before the ranks are stopped), on SIGUSR1 and
// every Spec.DiagnoseEvery. The headline of [Result.Report] names the
// culprit: the rank that held the job up (one stopped, hung, never
// arriving), not the first to complain.
//
// With Spec.OnFailure set to [OnFailureContinue] (gocoll run --on-failure
// continue) a failed rank stops nobody: the others learn of it through
// their transports and health checks and may shrink their communicator
// (collective.Comm.Shrink) and go on; Run still returns once every rank
// has ended, and the exit status still reports the first failure.
package job
