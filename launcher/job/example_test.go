//go:build unix

package job_test

import (
	"context"
	"fmt"
	"os"

	"github.com/gocoll/gocoll/launcher/job"
)

// One local rank; its output comes back prefixed with its rank, and a
// failure is reported with the rank's last lines (unless its one line
// already says it all).
func ExampleRun() {
	res, err := job.Run(context.Background(), job.Spec{
		Program: "/bin/sh", Args: []string{"-c", `echo "hello from rank $GOCOLL_RANK of $GOCOLL_WORLD_SIZE"; echo "exiting with 3"; exit 3`},
		NP: 1, LocalNames: []string{"node1"}, Stdout: os.Stdout, Stderr: os.Stdout,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res.Report(os.Stdout)
	fmt.Println("exit status", res.ExitCode())
	// Output:
	// [rank 0] hello from rank 0 of 1
	// [rank 0] exiting with 3
	// gocoll run: rank 0 on host node1 failed: exit status 3: exiting with 3
	// gocoll run: last 2 lines of rank 0:
	//     hello from rank 0 of 1
	//     exiting with 3
	// exit status 3
}
