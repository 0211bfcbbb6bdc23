package scripttest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gocoll/gocoll/internal/scripttest"
)

// Example shows the shape of a scripted test: the script, in
// testdata/queue.txt, would read
//
//	push size=64KiB n=2
//	----
//	queued 2 (131072 bytes)
//
//	pop
//	----
//	popped 65536 bytes
//
// and the test maps each command to the code under test, returning what it
// did as text. `go test -update` rewrites the expected outputs.
func Example() {
	_ = func(t *testing.T) { // func TestQueueScripts(t *testing.T)
		var queue []int64
		scripttest.Walk(t, "testdata", func(t *testing.T, cmd *scripttest.Cmd) string {
			switch cmd.Name {
			case "push":
				size, n := cmd.Size(t, "size"), cmd.IntOr(t, "n", 1)
				for range n {
					queue = append(queue, size)
				}
				return fmt.Sprintf("queued %d (%d bytes)", n, int64(n)*size)
			case "pop":
				size := queue[0]
				queue = queue[1:]
				return fmt.Sprintf("popped %d bytes", size)
			}
			cmd.Fatalf(t, "unknown command")
			return ""
		})
	}
}

func ExampleParseSize() {
	for _, s := range []string{"1500", "64KiB", "4MiB", "1.5KiB", "1G", "2GB", "4 MiB"} {
		n, err := scripttest.ParseSize(s)
		if err != nil {
			fmt.Println(strings.TrimPrefix(err.Error(), "scripttest: "))
			continue
		}
		fmt.Println(s, "=", n)
	}
	// Output:
	// 1500 = 1500
	// 64KiB = 65536
	// 4MiB = 4194304
	// 1.5KiB = 1536
	// 1G = 1000000000
	// 2GB = 2000000000
	// "4 MiB" is not a size like 1500, 64KiB, 4MiB or 1G
}
