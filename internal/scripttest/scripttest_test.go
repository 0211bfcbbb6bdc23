package scripttest

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// handle implements the commands of testdata/*.txt.
func handle(t *testing.T, c *Cmd) string {
	switch c.Name {
	case "echo":
		return c.Input
	case "args":
		var b strings.Builder
		for _, a := range c.Args {
			fmt.Fprintln(&b, a.String())
			c.Has(a.Key)
		}
		return b.String()
	case "typed":
		return fmt.Sprintf("n=%d d=%v s=%d f=%v ls=%v sz=%v on=%v",
			c.IntOr(t, "n", 7), c.DurationOr(t, "d", time.Second), c.SizeOr(t, "s", 1),
			c.FloatOr(t, "f", 0.5), c.Ints(t, "ls"), c.Sizes(t, "sz"), c.Bool(t, "on"))
	case "paragraphs":
		var parts []string
		for i := range c.Int(t, "n") {
			parts = append(parts, fmt.Sprintf("paragraph %d", i+1))
		}
		return strings.Join(parts, "\n\n")
	case "none":
		return ""
	}
	c.Fatalf(t, "unknown command")
	return ""
}

func TestScripts(t *testing.T) {
	Walk(t, "testdata", handle)
}
