package main

import (
	"context"
	"fmt"
	"os"
)

// gocoll run with one local rank: its output comes back prefixed.
func Example_run() {
	code := run(context.Background(), []string{"run", "-np", "1", "--", "/bin/echo", "hello from a rank"}, nil, os.Stdout, os.Stdout, nil)
	fmt.Println("exit status", code)
	// Output:
	// [rank 0] hello from a rank
	// exit status 0
}
