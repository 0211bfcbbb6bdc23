// Command plot turns the tables of a peer comparison (gocoll bench
// --format peers, ../shared/peers' OpenMPI and Gloo benchmarks; see
// bench/peers.sh) into a markdown table of busbw per size with gocoll's
// ratio to each peer, and a PNG of busbw (linear) against size (log) from
// 64 KiB up, under a caption with the machine, the date and "higher is
// better".
//
//	go run ./bench/plot [-ours gocoll] [-labels gocoll,mpi-tcp,...]
//	    [-colls allreduce,broadcast,alltoall] [-md table.md] [-png busbw.png] RAW...
//
// For every (label, ranks, collective, size) the fastest run counts, as in
// the peers' summarize.py; busbw is recomputed from size and time with
// nccl-tests' factors. Exit status 2 for bad flags, 1 if an input cannot be
// read or shows nothing to compare.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command with its arguments and outputs.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	ours := fs.String("ours", "gocoll", "label whose ratios to the others are shown")
	labels := fs.String("labels", "", "comma-separated labels, in column order (default: all, ours first)")
	colls := fs.String("colls", "allreduce,broadcast,alltoall", "comma-separated collectives")
	mdPath := fs.String("md", "", "write the markdown table here (default stdout)")
	pngPath := fs.String("png", "", "write the PNG plot here (default: no plot)")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "plot: %v\n", err)
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "plot: no raw files given (want RAW... with '## bench=... label=... n=...' tables)")
		return 2
	}
	v := view{ours: *ours, colls: splitList(*colls), labels: splitList(*labels)}
	res, err := readAll(fs.Args())
	if err == nil && len(res.best) == 0 {
		err = errors.New("no table rows found in the input")
	}
	if err == nil {
		err = writeOutputs(res, v, *mdPath, *pngPath, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "plot: %v\n", err)
		return 1
	}
	return 0
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// inputBytesMax bounds each input file (raw outputs are kilobytes).
const inputBytesMax = 64 << 20

// readAll parses every file into one set of results (best runs win).
func readAll(paths []string) (*results, error) {
	var all bytes.Buffer
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && st.Size() > inputBytesMax {
			return nil, fmt.Errorf("%s: larger than %d bytes", p, inputBytesMax)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		all.Write(b)
		all.WriteByte('\n')
	}
	return parse(&all)
}

func writeOutputs(res *results, v view, mdPath, pngPath string, stdout io.Writer) error {
	var md bytes.Buffer
	if err := writeTable(&md, res, v); err != nil {
		return err
	}
	if mdPath == "" {
		if _, err := stdout.Write(md.Bytes()); err != nil {
			return err
		}
	} else if err := os.WriteFile(mdPath, md.Bytes(), 0o644); err != nil {
		return err
	}
	if pngPath == "" {
		return nil
	}
	var png bytes.Buffer
	if err := drawPNG(&png, res, v); err != nil {
		return err
	}
	return os.WriteFile(pngPath, png.Bytes(), 0o644)
}
