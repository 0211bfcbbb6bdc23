package job

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseRsh(t *testing.T) {
	cases := []struct {
		in     string
		host   string
		want   []string
		remote bool
	}{
		{"ip netns exec {host}", "s1h1", []string{"ip", "netns", "exec", "s1h1", "prog", "a b"}, false},
		{"ssh", "n1", []string{"ssh", "n1", "prog", "'a b'"}, true},
		{"/usr/bin/ssh -p 2222 -l 'my user' {host}", "n1", []string{"/usr/bin/ssh", "-p", "2222", "-l", "my user", "n1", "prog", "'a b'"}, true},
		{`docker exec "ctr-{host}" --`, "x", []string{"docker", "exec", "ctr-x", "--", "prog", "a b"}, false},
		{`sh -c "echo \"{host}\"" \{`, "h", []string{"sh", "-c", `echo "h"`, "{", "prog", "a b"}, false},
	}
	for _, c := range cases {
		tpl, err := parseRsh(c.in)
		require.NoError(t, err, c.in)
		require.Equal(t, c.remote, tpl.remoteShell, c.in)
		require.Equal(t, c.want, tpl.command(c.host, []string{"prog", "a b"}), c.in)
	}
	for in, want := range map[string]string{
		"":                        "--rsh is empty",
		"   ":                     "--rsh is empty",
		"ssh 'host":               "unterminated '",
		`ssh "host`:               `unterminated "`,
		`ssh host\`:               "trailing backslash",
		strings.Repeat("x", 5000): "longer than 4096",
	} {
		_, err := parseRsh(in)
		require.Error(t, err, in)
		require.Contains(t, err.Error(), want, in)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"plain/path-1.2_x": "plain/path-1.2_x",
		"GOCOLL_RANK=3":    "GOCOLL_RANK=3",
		"":                 "''",
		"a b":              "'a b'",
		"it's":             `'it'\''s'`,
		"$HOME":            "'$HOME'",
	} {
		require.Equal(t, want, shellQuote(in))
	}
}

// Quoted words split back to themselves: what ssh's remote shell sees is
// what the launcher meant.
func FuzzSplitWordsQuoted(f *testing.F) {
	f.Add("a", "b c", "it's")
	f.Add("", "$x`y`", "\\\"")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		words := []string{a, b, c}
		for _, w := range words {
			if strings.ContainsAny(w, "\x00") {
				return
			}
		}
		var quoted []string
		for _, w := range words {
			quoted = append(quoted, shellQuote(w))
		}
		got, err := splitWords(strings.Join(quoted, " "))
		require.NoError(t, err)
		require.Equal(t, words, got)
	})
}

func FuzzParseRsh(f *testing.F) {
	f.Add("ip netns exec {host}")
	f.Add(`ssh -o "BatchMode yes" {host}`)
	f.Fuzz(func(t *testing.T, s string) {
		tpl, err := parseRsh(s)
		if err != nil {
			require.NotContains(t, err.Error(), "\n")
			return
		}
		argv := tpl.command("H", []string{"p"})
		require.GreaterOrEqual(t, len(argv), 2)
		require.Equal(t, "p", argv[len(argv)-1])
	})
}
