package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/trace"
	"sync"
	"syscall"
	"time"
)

// traceWindow is how much of the end of a run -trace keeps.
const traceWindow = time.Minute

// startTrace starts a Go execution trace flight recorder keeping the last
// traceWindow (at most 1 GiB) of the run, and returns the function that
// writes it to dir/rank<GOCOLL_RANK>.trace (for go tool trace). A SIGTERM
// (gocoll run stopping the ranks after another one failed) writes it too,
// then exits with status 143.
func startTrace(dir string) (func(), error) {
	path := filepath.Join(dir, fmt.Sprintf("rank%s.trace", os.Getenv("GOCOLL_RANK")))
	fr := trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: traceWindow, MaxBytes: 1 << 30})
	if err := fr.Start(); err != nil {
		return nil, err
	}
	var once sync.Once
	write := func() {
		once.Do(func() {
			f, err := os.Create(path)
			if err == nil {
				_, err = fr.WriteTo(f)
				err = errors.Join(err, f.Close())
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "rssprobe: trace:", err)
			}
			fr.Stop()
		})
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	go func() {
		<-sig
		write()
		os.Exit(143)
	}()
	return write, nil
}
