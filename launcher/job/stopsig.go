package job

import (
	"context"
	"os"
	"syscall"
)

// stopOn returns a context that also ends when a stopping signal (SIGINT,
// SIGTERM, SIGHUP) arrives on sigs, for the waits of a node that has no
// rank running (dialling node 0's store, waiting for the other nodes to
// leave): Ctrl-C ends them at once instead of after --rdzv-timeout. Other
// signals arriving meanwhile are dropped: there is no rank to forward them
// to. stop ends the watch and returns the stopping signal that came, or 0;
// the caller calls it once it is done waiting.
func stopOn(ctx context.Context, sigs <-chan os.Signal) (wctx context.Context, stop func() syscall.Signal) {
	wctx, cancel := context.WithCancel(ctx)
	var got syscall.Signal
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		for {
			select {
			case <-wctx.Done():
				return
			case sig := <-sigs:
				if s, ok := sig.(syscall.Signal); ok && (s == syscall.SIGINT || s == syscall.SIGTERM || s == syscall.SIGHUP) {
					got = s
					cancel()
					return
				}
			}
		}
	}()
	return wctx, func() syscall.Signal {
		cancel()
		<-exited
		return got
	}
}
