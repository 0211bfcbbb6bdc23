package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Exit statuses of Main.
const (
	ExitOK    = 0 // every value right
	ExitWrong = 1 // wrong values, or the run failed
	ExitUsage = 2 // bad command line
	// ExitInterrupted is the status after ctx ended (Ctrl-C: gocoll's main
	// cancels ctx on SIGINT, SIGTERM and SIGHUP): 128+SIGINT, as a shell
	// reports a program SIGINT stopped.
	ExitInterrupted = 130
)

// Main is gocoll bench: it parses args (the command line after "bench"),
// runs the benchmark and returns the process exit status. The report goes
// to stdout; errors (one line each) and progress lines go to stderr.
//
// Started by a launcher (gocoll run, mpirun, srun, torchrun: whatever
// launcher.Init understands), Main is one rank of the launcher's world;
// rank 0 prints the report. Run alone, Main starts the ranks itself: -np
// processes of this same program (os.Executable with this process's
// arguments, and the environment launcher.Init reads; see EnvArgs),
// connected over TCP, or -np goroutines of this process for --transport
// inproc and with --in-process.
//
// When ctx ends (Ctrl-C), Main stops the collectives under way and the
// ranks it started (they get SIGINT), and returns ExitInterrupted with one
// line on stderr; a rank a launcher started returns it without a line (the
// launcher says the job was stopped).
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	_, launched, _ := launchedJob()
	code := mainCmd(ctx, args, stdout, &untilDone{ctx: ctx, w: stderr})
	if ctx.Err() != nil && code != ExitOK && code != ExitUsage {
		if !launched {
			fmt.Fprintf(stderr, "gocoll bench: interrupted (%v)\n", context.Cause(ctx))
		}
		return ExitInterrupted
	}
	return code
}

func mainCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == P2PCommand {
		return mainP2P(ctx, args, stdout, stderr)
	}
	o, err := ParseArgs(args)
	if errors.Is(err, ErrHelp) {
		writeUsage(stdout)
		return ExitOK
	}
	if err != nil {
		return usageError(stderr, err)
	}
	job, launched, err := launchedJob()
	if err != nil {
		return usageError(stderr, err)
	}
	if launched {
		return runLaunchedRank(ctx, o, job, stdout, stderr)
	}
	if o.Transport == "inproc" || o.InProcess {
		return runInProcess(ctx, o, stdout, stderr)
	}
	return spawnRanks(ctx, o, args, stdout, stderr)
}

// usageError reports a bad command line in one line and returns ExitUsage.
func usageError(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "gocoll bench: %s\n", oneLine(err))
	return ExitUsage
}

// runError reports a failed run in one line and returns ExitWrong.
func runError(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "gocoll bench: %s\n", oneLine(err))
	return ExitWrong
}

// wrongStatus is the exit status of a run that found wrong values.
func wrongStatus(wrong int64) int {
	if wrong > 0 {
		return ExitWrong
	}
	return ExitOK
}

func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}

// writeUsage prints the help text.
func writeUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: gocoll bench COLL [flags]\n       gocoll bench p2p [flags]   (one connection's goodput and paths; see gocoll bench p2p -h)\n\nCOLL is %s, a comma-separated list of them, or all.\nFlags (nccl-tests' where it has them):\n", collNames())
	for _, s := range flagSpecs {
		names := "--" + s.long
		if s.short != "" {
			names = "-" + s.short + ", " + names
		}
		arg := " VALUE"
		if s.boolean {
			arg = ""
		}
		fmt.Fprintf(w, "  %-28s %s\n", names+arg, s.help)
	}
	fmt.Fprint(w, "\nExit status: 0 all values right, 1 wrong values or a failed run, 2 bad flags.\n")
}

// untilDone writes to w until ctx ends, and drops what comes after: the
// errors of collectives and ranks that the end of ctx stopped, which would
// say N times what Main says once.
type untilDone struct {
	ctx context.Context
	w   io.Writer
}

func (u *untilDone) Write(p []byte) (int, error) {
	if u.ctx.Err() != nil {
		return len(p), nil
	}
	return u.w.Write(p)
}
