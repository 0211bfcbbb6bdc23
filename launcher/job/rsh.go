package job

import (
	"fmt"
	"path/filepath"
	"strings"
)

// DefaultRsh starts remote ranks with ssh, never prompting for a password.
const DefaultRsh = "ssh -o BatchMode=yes {host}"

// HostPlaceholder is replaced by the host name in an rsh template.
const HostPlaceholder = "{host}"

// maxTemplateBytes bounds an rsh template.
const maxTemplateBytes = 4096

// rshTemplate is a parsed --rsh command: words with {host} placeholders.
type rshTemplate struct {
	words []string
	// remoteShell is true for ssh and rsh, which join their arguments into
	// one line for a remote shell: the rank's command words are then
	// shell-quoted. Other commands (ip netns exec, docker exec, ...) get
	// them as separate arguments, unquoted.
	remoteShell bool
}

// parseRsh splits an rsh template into words as a shell would (spaces
// separate words; single quotes, double quotes and backslashes quote), and
// appends {host} if the template has no placeholder.
func parseRsh(s string) (rshTemplate, error) {
	if len(s) > maxTemplateBytes {
		return rshTemplate{}, fmt.Errorf("--rsh longer than %d bytes", maxTemplateBytes)
	}
	words, err := splitWords(s)
	if err != nil {
		return rshTemplate{}, fmt.Errorf("--rsh %q: %v", s, err)
	}
	if len(words) == 0 {
		return rshTemplate{}, fmt.Errorf("--rsh is empty")
	}
	if !strings.Contains(s, HostPlaceholder) {
		words = append(words, HostPlaceholder)
	}
	base := filepath.Base(words[0])
	return rshTemplate{words: words, remoteShell: base == "ssh" || base == "rsh"}, nil
}

// command returns the argv that runs cmd on host.
func (t rshTemplate) command(host string, cmd []string) []string {
	argv := make([]string, 0, len(t.words)+len(cmd))
	for _, w := range t.words {
		argv = append(argv, strings.ReplaceAll(w, HostPlaceholder, host))
	}
	for _, w := range cmd {
		if t.remoteShell {
			w = shellQuote(w)
		}
		argv = append(argv, w)
	}
	return argv
}

// splitWords splits s into shell words. It understands '...', "..." (with
// \" \\ \$ \` escapes) and backslash outside quotes; nothing else of the
// shell (no variables, no globs).
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
			continue
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unterminated ' at offset %d", i)
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
		case c == '"':
			n, err := readDoubleQuoted(s[i+1:], &cur)
			if err != nil {
				return nil, fmt.Errorf("%v at offset %d", err, i)
			}
			i += n
		case c == '\\':
			if i+1 == len(s) {
				return nil, fmt.Errorf("trailing backslash")
			}
			i++
			cur.WriteByte(s[i])
		default:
			cur.WriteByte(c)
		}
		inWord = true
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// readDoubleQuoted copies the inside of a double-quoted string (s starts
// after the opening quote) to cur and returns how many bytes it used,
// closing quote included.
func readDoubleQuoted(s string, cur *strings.Builder) (int, error) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return i + 1, nil
		case c == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0:
			i++
			cur.WriteByte(s[i])
		default:
			cur.WriteByte(c)
		}
	}
	return 0, fmt.Errorf("unterminated \"")
}

// shellQuote quotes w for a POSIX shell, leaving plain words alone.
func shellQuote(w string) string {
	if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}
