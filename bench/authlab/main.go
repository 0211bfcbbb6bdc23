// Command authlab measures what MetaRoCE's authentication costs between
// hosts of a gocoll lab (issue 16's targets), one mode per run, with the
// same flags on every rank but -rank, so that bench/auth_lab.sh can run
// every mode, none included, in one lab. gocoll run always gives a job a
// key, so it cannot run the "without" case off loopback; authlab builds
// its mrtransport world itself from its flags:
//
//	echo "$KEY" | authlab -rank 0 -peers 10.1.0.11:7000,10.2.0.11:7000 -mode header -test p2p
//
// Rank r binds -peers' r-th address, path i its port plus i (-paths
// paths), says so on stderr ("authlab: rank r: listening on ...") and
// connects to the others there: lower ranks dial higher ones, so start the
// highest first and each lower one once the ranks above it listen (a
// datagram sent to a port not bound yet draws an ICMP port unreachable,
// which MetaRoCE may read after the connection is up as the peer's
// process gone). Modes other than none read the job key (jobkey.Parse's
// rules) from the first line of stdin, never from the command line.
//
//	p2p        2 ranks: rank 0 sends -n messages of -size bytes to rank 1
//	           (after one warm-up message), two in flight; rank 1 prints
//	           the goodput and both processes' CPU time per GB
//	allreduce  -n float32 AllReduce sums of -size bytes over the collective
//	           layer (after two warm-up calls); rank 0 prints the busbw
//	           (nccl-tests' formula, the slowest rank's time) and the CPU
//	           time per call summed over the ranks
//
// The printing rank writes one line of key=value fields, among them wrong:
// p2p checks every message's index and the last one's every byte,
// allreduce every element of the last result (exact: small integers).
// Exit status: 0 all right, 1 a failure or wrong data, 2 bad flags or key.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/gocoll/gocoll/internal/jobkey"
	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/mrtransport"
)

func main() {
	o, err := parseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "authlab:", err)
		os.Exit(2)
	}
	var key jobkey.Key
	if o.mode != metaroce.AuthNone {
		if key, err = readKey(os.Stdin); err != nil {
			fmt.Fprintln(os.Stderr, "authlab:", err)
			os.Exit(2)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	res, err := run(ctx, o, key, func(rank int, addr mrtransport.PeerAddr) {
		fmt.Fprintf(os.Stderr, "authlab: rank %d: listening on %v\n", rank, addr)
	})
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "authlab: rank %d: %v\n", o.rank, err)
		os.Exit(1)
	}
	if res.line != "" {
		fmt.Println(res.line)
	}
	if res.wrong != 0 {
		os.Exit(1)
	}
}
