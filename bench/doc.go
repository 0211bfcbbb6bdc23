// Package bench is gocoll bench: nccl-tests for gocoll. [Main] runs one or
// more collectives over a sweep of sizes and prints nccl-tests' table (or
// one JSON object per size, or the table of the shared peer benchmarks), so
// that gocoll's figures read like NCCL's and sit next to OpenMPI's and
// Gloo's.
//
//	gocoll bench allreduce -b 8 -e 128M -f 2            # 4 local ranks over TCP
//	gocoll bench all -np 2 --transport inproc -c 1      # every collective, checked
//	gocoll run -np 8 gocoll bench reducescatter -d bf16 # under a launcher
//
// # Sizes and bandwidths
//
// As in nccl-tests, the size column is the larger of one rank's send and
// receive buffers: for AllGather, ReduceScatter and AllToAll it is the whole
// array of n blocks (count·n·typesize, count being the count column), for
// the others count·typesize. time is the mean time of one call over -n
// timed calls, the maximum over ranks; algbw = size/time and busbw = algbw
// times nccl-tests' factor: 2(n-1)/n for AllReduce, (n-1)/n for
// ReduceScatter, AllGather and AllToAll, 1 for Broadcast, Reduce and
// SendRecv (busbw is comparable with link bandwidth whatever the algorithm).
// GB/s are 10^9 bytes per second. Each size is measured out of place, then
// in place (same buffer, or this rank's block of it, as NCCL defines the
// in-place forms); gocoll's AllToAll and SendRecv have no in-place form and
// print N/A there.
//
// # Checking
//
// With -c N (default 1), after the timed calls N more calls run on fresh
// inputs, small integers whose results are exact in every data type
// whatever order the ranks' contributions are added in, with the outputs
// first poisoned; the elements that differ from the expected result, bit
// for bit, summed over ranks, are #wrong. The footer "# Out of bounds
// values : N OK|FAILED" totals them per collective, and Main's exit status
// is 1 if any is wrong.
//
// # Ranks and memory
//
// Started by a launcher, each process is one rank of the launcher's world.
// Started alone, Main starts -np ranks (default 4): processes of the same
// program over TCP, MPTCP or MetaRoCE, started by gocoll run's engine
// (launcher/job), or goroutines of this process over inproc or, with
// --in-process, any of the others. Each rank allocates two buffers of the largest
// size once (outside the Go heap, advised to use transparent huge pages) and
// touches every page before anything is timed, so that no page fault is
// timed; the report ends with each rank's peak resident set size.
//
// # Stolen CPU
//
// On Linux each rank reads /proc/stat just before and just after every
// timed loop, and the footer "# CPU stolen by the hypervisor in timed loops
// : A % average, W % worst (...)" gives the share of the host's CPU time
// counted as steal, over all loops and in the worst one (the largest over
// ranks), with a warning line when either is above 10 %: the figures of a
// VM whose host is busy are unreliable. --json gives each loop's share as
// steal_pct. /proc/stat counts whole ticks, so a loop with fewer than 20
// ticks of host CPU time has no share of its own (null), and a run with
// fewer in all says its loops were too short; where /proc/stat cannot be
// read there is no footer line.
//
// # Exit status
//
// 0: every checked value right; 1: wrong values, or the run failed (one line
// on stderr); 2: a bad command line (one line on stderr).
package bench
