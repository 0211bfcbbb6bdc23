package bench_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/gocoll/gocoll/bench"
)

// Main with --json: one object per size. Timings vary from run to run, so
// this prints only the layout and the check.
func ExampleMain() {
	var out bytes.Buffer
	code := bench.Main(context.Background(), []string{"allgather", "--transport", "inproc", "-np", "4",
		"--sizes", "64,1K", "-n", "2", "--json"}, &out, os.Stderr)
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var row struct {
			Coll  string `json:"coll"`
			Size  int64  `json:"size"`
			Count int64  `json:"count"`
			Wrong int64  `json:"wrong"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			fmt.Println(err)
		}
		fmt.Printf("%s size %d count %d wrong %d\n", row.Coll, row.Size, row.Count, row.Wrong)
	}
	fmt.Println("exit status", code)
	// Output:
	// allgather size 64 count 4 wrong 0
	// allgather size 1024 count 64 wrong 0
	// exit status 0
}
