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
)

// Main is gocoll bench: it parses args (the command line after "bench"),
// runs the benchmark and returns the process exit status. The report goes
// to stdout; errors (one line each) and progress lines go to stderr.
//
// Run alone, Main starts the ranks itself: -np processes of this same
// program (os.Executable with this process's arguments, told by their
// environment which rank they are; see IsSpawnedRank), connected over TCP,
// or -np goroutines of this process for --transport inproc and with
// --in-process. In a process it spawned, Main runs that one rank and takes
// its arguments from the environment, ignoring args.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if job, ok, err := spawnedJob(); ok || err != nil {
		if err != nil {
			return runError(stderr, err)
		}
		return runSpawnedRank(ctx, job, stdout, stderr)
	}
	o, err := ParseArgs(args)
	if errors.Is(err, ErrHelp) {
		writeUsage(stdout)
		return ExitOK
	}
	if err != nil {
		return usageError(stderr, err)
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
	fmt.Fprintf(w, "usage: gocoll bench COLL [flags]\n\nCOLL is %s, a comma-separated list of them, or all.\nFlags (nccl-tests' where it has them):\n", collNames())
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
