package transporttest

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport"
)

func refFactory(mutation string) WorldFactory {
	return func(t *testing.T, size int) []transport.Endpoint {
		eps := newRefWorld(size, mutation)
		t.Cleanup(func() {
			for _, ep := range eps {
				_ = ep.Close()
			}
		})
		return eps
	}
}

// TestReference runs the suite against the in-memory reference transport,
// which keeps every promise.
func TestReference(t *testing.T) {
	Run(t, refFactory(""))
}

// TestBrokenReference is run in a child process by TestSuiteCatchesBugs,
// with a mutation that breaks one promise.
func TestBrokenReference(t *testing.T) {
	mutation := os.Getenv("TRANSPORTTEST_MUTATION")
	if mutation == "" {
		t.Skip("run by TestSuiteCatchesBugs only")
	}
	waitTimeout = time.Second // a broken transport may leave requests stuck
	Run(t, refFactory(mutation))
}

// TestSuiteCatchesBugs runs the suite against reference transports that
// each break one promise, and checks that the expected subtest fails.
func TestSuiteCatchesBugs(t *testing.T) {
	for mutation, subtest := range map[string]string{
		"lifo":       "FIFOSameTag",
		"notrunc":    "Truncated",
		"plainabort": "Abort",
		"recvonly":   "Abort",
		"keepsends":  "AbortEndsSends",
		"lastabort":  "AbortKeepsFirstError",
		"dropsent":   "PeerCloseDelivers",
	} {
		t.Run(mutation, func(t *testing.T) {
			run := fmt.Sprintf("-test.run=^TestBrokenReference$/^(RankSize|%s)$", subtest)
			cmd := exec.Command(os.Args[0], run, "-test.v")
			cmd.Env = append(os.Environ(), "TRANSPORTTEST_MUTATION="+mutation)
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "suite passed a transport with mutation %q:\n%s", mutation, out)
			require.Contains(t, string(out), fmt.Sprintf("--- FAIL: TestBrokenReference/%s ", subtest))
			require.Contains(t, string(out), "--- PASS: TestBrokenReference/RankSize ",
				"mutation %q should not break everything:\n%s", mutation, out)
		})
	}
}
