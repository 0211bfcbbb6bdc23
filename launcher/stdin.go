package launcher

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// stdinExitGrace is how long a rank whose launcher went away has to end
// after SIGTERM before it exits on its own.
const stdinExitGrace = 5 * time.Second

var stdinOnce sync.Once

// watchStdin ends the process when its stdin reaches end of file: gocoll
// run starts remote ranks with a pipe on stdin that it never writes, so
// EOF means the launcher (or the ssh connection to it) is gone. The process
// gets SIGTERM, so that a handler of the program's can clean up, and exits
// with status 143 if it is still running stdinExitGrace later (without
// signals, on Windows, it exits with 143 at once). Only the first call per
// process starts the watch.
func watchStdin(rank int) {
	stdinOnce.Do(func() {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			fmt.Fprintf(os.Stderr, "gocoll: rank %d: the launcher went away (stdin closed); exiting\n", rank)
			if terminateSelf() {
				time.Sleep(stdinExitGrace)
			}
			os.Exit(143)
		}()
	})
}
