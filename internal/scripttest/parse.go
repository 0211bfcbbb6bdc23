package scripttest

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxScriptBytes bounds the size of a script file.
const MaxScriptBytes = 16 << 20

// separator is the line between a block's command and its output.
const separator = "----"

// block is one parsed command with the location of its expected output.
type block struct {
	cmd *Cmd
	// want is the expected output: lines joined with "\n", each ending in
	// "\n"; empty if there are none.
	want string
	// outStart and outEnd delimit, as line indexes into the script, the
	// lines after the first separator that hold the expected output
	// (doubled separators included); a rewrite replaces exactly them.
	outStart, outEnd int
}

// ParseError is a syntax error in a script, at a file and line.
type ParseError struct {
	File string
	Line int // 1-based
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// splitLines splits src into lines without their "\n" and any "\r" before
// it (so "\r\n" line ends read as "\n"); a final
// newline does not start an extra empty line.
func splitLines(src string) []string {
	src = strings.TrimSuffix(src, "\n")
	if src == "" {
		return nil
	}
	lines := strings.Split(src, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, "\r")
	}
	return lines
}

// parseScript parses a whole script into blocks.
func parseScript(file string, lines []string) ([]block, error) {
	var blocks []block
	for i := 0; i < len(lines); {
		trimmed := strings.TrimSpace(lines[i])
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			i++
			continue
		}
		b, next, err := parseBlock(file, lines, i)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, b)
		i = next
	}
	return blocks, nil
}

// parseBlock parses the block whose command is lines[i] and returns it and
// the index of the first line after it.
func parseBlock(file string, lines []string, i int) (block, int, error) {
	if lines[i] == separator {
		return block{}, 0, &ParseError{File: file, Line: i + 1, Msg: fmt.Sprintf("%q without a command before it", separator)}
	}
	name, args, err := parseCommand(lines[i])
	if err != nil {
		return block{}, 0, &ParseError{File: file, Line: i + 1, Msg: err.Error()}
	}
	cmd := &Cmd{Name: name, Args: args, File: file, Line: i + 1}
	j := i + 1
	for j < len(lines) && lines[j] != separator {
		j++
	}
	if j == len(lines) {
		return block{}, 0, &ParseError{File: file, Line: i + 1, Msg: fmt.Sprintf("command %q has no %q line after it", name, separator)}
	}
	cmd.Input = strings.Join(lines[i+1:j], "\n")
	b := block{cmd: cmd, outStart: j + 1}
	var out []string
	if j+1 < len(lines) && lines[j+1] == separator { // doubled separators
		k := j + 2
		for k+1 < len(lines) && (lines[k] != separator || lines[k+1] != separator) {
			k++
		}
		if k+1 >= len(lines) {
			return block{}, 0, &ParseError{File: file, Line: j + 2, Msg: "output opened with doubled separators is not closed by them"}
		}
		out, b.outEnd = lines[j+2:k], k+2
	} else {
		k := j + 1
		for k < len(lines) && lines[k] != "" {
			k++
		}
		out, b.outEnd = lines[j+1:k], k
	}
	if len(out) > 0 {
		b.want = strings.Join(out, "\n") + "\n"
	}
	return b, b.outEnd, nil
}

// parseCommand splits a command line into its name and arguments.
func parseCommand(line string) (string, []Arg, error) {
	for i := range len(line) {
		if c := line[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return "", nil, fmt.Errorf("control character %q at column %d (quote it in a string)", c, i+1)
		}
	}
	s := &scanner{src: line}
	name := s.word()
	if name == "" {
		return "", nil, fmt.Errorf("command line %q does not start with a name", line)
	}
	var args []Arg
	for {
		s.skipSpace()
		if s.done() {
			return name, args, nil
		}
		a, err := s.arg()
		if err != nil {
			return "", nil, fmt.Errorf("argument %d of %q: %w", len(args)+1, name, err)
		}
		args = append(args, a)
	}
}

// scanner reads a command line left to right.
type scanner struct {
	src string
	pos int
}

func (s *scanner) done() bool { return s.pos >= len(s.src) }

func (s *scanner) skipSpace() {
	for !s.done() && (s.src[s.pos] == ' ' || s.src[s.pos] == '\t') {
		s.pos++
	}
}

// word reads up to a space, '=', '(', ')' or ','.
func (s *scanner) word() string {
	start := s.pos
	for !s.done() && !strings.ContainsRune(" \t=(),", rune(s.src[s.pos])) {
		s.pos++
	}
	return s.src[start:s.pos]
}

// arg reads one bare word, quoted string, key=value or key=(list).
func (s *scanner) arg() (Arg, error) {
	key, err := s.item()
	if err != nil {
		return Arg{}, err
	}
	if s.done() || s.src[s.pos] != '=' {
		return Arg{Key: key}, s.endOfArg()
	}
	s.pos++ // '='
	if s.done() || s.src[s.pos] != '(' {
		v, err := s.item()
		if err != nil {
			return Arg{}, err
		}
		return Arg{Key: key, Vals: []string{v}}, s.endOfArg()
	}
	s.pos++ // '('
	vals := []string{}
	for {
		s.skipSpace()
		if !s.done() && s.src[s.pos] == ')' && len(vals) == 0 {
			s.pos++
			return Arg{Key: key, Vals: vals}, s.endOfArg()
		}
		v, err := s.item()
		if err != nil {
			return Arg{}, err
		}
		vals = append(vals, v)
		s.skipSpace()
		switch {
		case s.done():
			return Arg{}, fmt.Errorf("list %s=( is not closed", key)
		case s.src[s.pos] == ',':
			s.pos++
		case s.src[s.pos] == ')':
			s.pos++
			return Arg{Key: key, Vals: vals}, s.endOfArg()
		default:
			return Arg{}, fmt.Errorf("unexpected %q in list %s", s.src[s.pos], key)
		}
	}
}

// item reads a bare word or a Go double-quoted string; it must not be empty.
func (s *scanner) item() (string, error) {
	if !s.done() && s.src[s.pos] == '"' {
		prefix, err := strconv.QuotedPrefix(s.src[s.pos:])
		if err != nil {
			return "", fmt.Errorf("bad quoted string at column %d", s.pos+1)
		}
		s.pos += len(prefix)
		return strconv.Unquote(prefix)
	}
	w := s.word()
	if w == "" {
		if s.done() {
			return "", fmt.Errorf("missing value at end of line")
		}
		return "", fmt.Errorf("unexpected %q at column %d", s.src[s.pos], s.pos+1)
	}
	return w, nil
}

// endOfArg checks that an argument is followed by a space or the line end.
func (s *scanner) endOfArg() error {
	if s.done() || s.src[s.pos] == ' ' || s.src[s.pos] == '\t' {
		return nil
	}
	return fmt.Errorf("unexpected %q at column %d", s.src[s.pos], s.pos+1)
}
