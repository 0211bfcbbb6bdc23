package launcher

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/gocoll/gocoll/internal/jobkey"
)

// stdinKeyTimeout bounds the wait for the job key on stdin: gocoll run
// writes it as soon as the remote command starts, so only a stalled ssh
// takes long.
const stdinKeyTimeout = 60 * time.Second

var stdinKey struct {
	once sync.Once
	key  string
	err  error
}

// readStdinKey returns the first line of stdin, where gocoll run writes a
// remote rank's job key, so that the key is on no command line. It reads
// one byte at a time, so nothing after the line is consumed (the stdin
// watch of GOCOLL_WATCH_STDIN reads on), and at most jobkey.MaxLen+1 bytes.
// Only the first call per process reads; later ones return its result.
func readStdinKey() (string, error) {
	stdinKey.once.Do(func() {
		type result struct {
			key string
			err error
		}
		done := make(chan result, 1)
		go func() {
			k, err := readKeyLine(os.Stdin)
			done <- result{k, err}
		}()
		select {
		case r := <-done:
			stdinKey.key, stdinKey.err = r.key, r.err
		case <-time.After(stdinKeyTimeout):
			stdinKey.err = fmt.Errorf("no job key on stdin within %v", stdinKeyTimeout)
		}
	})
	return stdinKey.key, stdinKey.err
}

// readKeyLine reads one line of at most jobkey.MaxLen bytes from r, byte by
// byte, and returns it without its newline. Its errors never show the key.
func readKeyLine(r io.Reader) (string, error) {
	buf := make([]byte, 0, 128)
	var b [1]byte
	for {
		n, err := r.Read(b[:])
		if n == 1 {
			if b[0] == '\n' {
				return string(buf), nil
			}
			if len(buf) == jobkey.MaxLen {
				return "", fmt.Errorf("the job key's line on stdin is longer than %d bytes", jobkey.MaxLen)
			}
			buf = append(buf, b[0])
			continue
		}
		if errors.Is(err, io.EOF) {
			return "", fmt.Errorf("stdin ended after %d bytes, before the job key's line did", len(buf))
		}
		if err != nil {
			return "", fmt.Errorf("reading the job key from stdin: %v", err)
		}
	}
}
