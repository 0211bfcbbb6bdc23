package scripttest

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzScript parses arbitrary scripts. For any script that parses, running
// it with new outputs and re-parsing the rewritten text must give back the
// same commands with the new outputs, and rewriting again changes nothing.
func FuzzScript(f *testing.F) {
	f.Add("echo\nhello\n----\nhello\n")
	f.Add("# c\nargs 1->2 a=(1, 2) q=\"x y\" e=()\n----\n----\nx\n\ny\n----\n----\nnone\n----\n")
	f.Add("a\n----\n----\n----\n----\n")
	f.Add("x\r\n----\r\nout\r\n")
	f.Fuzz(func(t *testing.T, src string) {
		blocks, err := parseScript("f.txt", splitLines(src))
		if err != nil {
			return
		}
		// Odd blocks keep their output; even ones get a new one that has a
		// blank line in it, or none.
		newOutput := func(i int, c *Cmd) string {
			switch {
			case i%2 == 1:
				return blocks[i].want
			case i%4 == 0:
				return c.Name + "\n\n" + c.String()
			}
			return ""
		}
		i := 0
		res, err := execute(t, "f.txt", src, func(t *testing.T, c *Cmd) string {
			c.Positional()
			for _, a := range c.Args {
				c.Has(a.Key)
			}
			out := newOutput(i, c)
			i++
			return out
		})
		if err != nil {
			return // an output that cannot be stored
		}
		again, err := parseScript("f.txt", splitLines(res.rewritten))
		require.NoError(t, err, "rewritten:\n%s", res.rewritten)
		require.Equal(t, len(blocks), len(again), "rewritten:\n%s", res.rewritten)
		for j := range blocks {
			require.Equal(t, blocks[j].cmd.String(), again[j].cmd.String())
			require.Equal(t, blocks[j].cmd.Input, again[j].cmd.Input)
			require.Equal(t, normalizeOutput(newOutput(j, blocks[j].cmd)), again[j].want)
		}
	})
}

// FuzzCommandLine checks that a parsed command line renders back to one
// that parses to the same command.
func FuzzCommandLine(f *testing.F) {
	for _, s := range []string{"send 1->2 size=64KiB drop=(3,7)", `c q="a\tb" e=() l=("x,y", z)`, "c a=b=c", "c ("} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		name, args, err := parseCommand(line)
		if err != nil {
			return
		}
		c := &Cmd{Name: name, Args: args}
		name2, args2, err := parseCommand(c.String())
		require.NoError(t, err, "rendered %q", c.String())
		require.Equal(t, name, name2)
		require.Equal(t, args, args2)
	})
}

// FuzzParseSize checks that sizes never panic, are never negative, and that
// a plain number of bytes parses to itself.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"64KiB", "1.5MiB", "1G", "9223372036854775807", "0.5B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseSize(s)
		if err != nil {
			return
		}
		require.GreaterOrEqual(t, v, int64(0))
		back, err := ParseSize(strconv.FormatInt(v, 10))
		require.NoError(t, err)
		require.Equal(t, v, back)
	})
}
