package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gocoll/gocoll/internal/jobkey"
	"github.com/gocoll/gocoll/transport/metaroce"
)

func TestParseArgs(t *testing.T) {
	base := []string{"-rank", "1", "-peers", "10.1.0.11:7000,10.2.0.11:7000", "-mode", "full", "-test", "p2p"}
	o, err := parseArgs(base)
	if err != nil {
		t.Fatal(err)
	}
	if o.rank != 1 || len(o.peers) != 2 || o.peers[1].String() != "10.2.0.11:7000" || o.mode != metaroce.AuthFull ||
		o.test != "p2p" || o.paths != 8 || o.size != 64<<20 || o.n != 8 || o.timeout != 5*time.Minute {
		t.Fatalf("parseArgs(%q) = %+v", base, o)
	}
	o, err = parseArgs([]string{"-rank", "3", "-peers", "10.1.0.11:7000,10.1.0.12:7000,10.2.0.11:7000,[fd00::1]:7000",
		"-mode", "none", "-test", "allreduce", "-paths", "4", "-size", "1M", "-n", "3", "-timeout", "30s"})
	if err != nil {
		t.Fatal(err)
	}
	if o.rank != 3 || len(o.peers) != 4 || o.mode != metaroce.AuthNone || o.paths != 4 || o.size != 1<<20 || o.n != 3 || o.timeout != 30*time.Second {
		t.Fatalf("allreduce options = %+v", o)
	}
}

func TestParseArgsRefusesBadInput(t *testing.T) {
	peers2 := "10.1.0.11:7000,10.2.0.11:7000"
	good := map[string]string{"-rank": "0", "-peers": peers2, "-mode": "header", "-test": "p2p"}
	with := func(kv ...string) []string {
		m := map[string]string{}
		for k, v := range good {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "<unset>" {
				delete(m, kv[i])
			} else {
				m[kv[i]] = kv[i+1]
			}
		}
		var args []string
		for k, v := range m {
			args = append(args, k+"="+v)
		}
		return args
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no mode", with("-mode", "<unset>"), "-mode"},
		{"unknown mode", with("-mode", "aes"), "want one of none, header, full, encrypt"},
		{"no peers", with("-peers", "<unset>"), "-peers is required"},
		{"one peer", with("-peers", "10.1.0.11:7000"), "1 addresses"},
		{"peer without port", with("-peers", "10.1.0.11,10.2.0.11:7000"), "rank 0"},
		{"port 0", with("-peers", "10.1.0.11:0,10.2.0.11:7000"), "port 0"},
		{"unspecified", with("-peers", "0.0.0.0:7000,10.2.0.11:7000"), "unspecified"},
		{"duplicate", with("-peers", "10.1.0.11:7000,10.1.0.11:7000"), "ranks 0 and 1"},
		{"no room for paths", with("-peers", "10.1.0.11:65530,10.2.0.11:7000"), "no room for 8 paths"},
		{"empty peer", with("-peers", "10.1.0.11:7000,"), "rank 1"},
		{"too many peers", with("-peers", strings.Repeat("10.1.0.11:7000,", maxRanks)+"10.1.0.12:7000"), "want 2 to 64"},
		{"no rank", with("-rank", "<unset>"), "-rank -1"},
		{"rank too high", with("-rank", "2"), "-rank 2"},
		{"rank not a number", with("-rank", "x"), "invalid value"},
		{"no test", with("-test", "<unset>"), "-test"},
		{"unknown test", with("-test", "alltoall"), "want p2p or allreduce"},
		{"p2p of 3", with("-peers", peers2+",10.2.0.12:7000"), "takes 2 ranks"},
		{"paths 0", with("-paths", "0"), "-paths 0"},
		{"paths too many", with("-paths", "1000"), "-paths 1000"},
		{"size bad", with("-size", "lots"), "-size"},
		{"size too small", with("-size", "4"), "-size 4"},
		{"size too large", with("-size", "2G"), "-size 2147483648"},
		{"allreduce size not multiple of 4", with("-test", "allreduce", "-size", "1026"), "multiple of 4"},
		{"n 0", with("-n", "0"), "-n 0"},
		{"n negative", with("-n", "-5"), "-n -5"},
		{"timeout 0", with("-timeout", "0s"), "-timeout 0s"},
		{"timeout huge", with("-timeout", "48h"), "-timeout 48h"},
		{"timeout not a duration", with("-timeout", "soon"), "invalid value"},
		{"unknown flag", append(with(), "-key=secret"), "not defined"},
		{"extra argument", append(with(), "extra"), "unexpected argument"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseArgs(c.args)
			if err == nil {
				t.Fatalf("parseArgs(%q) = nil error, want one with %q", c.args, c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("parseArgs(%q) = %v, want an error with %q", c.args, err, c.want)
			}
		})
	}
}

func TestReadKey(t *testing.T) {
	const text = "lab-key-0123456789abcdef"
	want, err := jobkey.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{text, text + "\n", text + "\r\n", text + "\nignored second line"} {
		k, err := readKey(strings.NewReader(in))
		if err != nil || !k.Equal(want) {
			t.Fatalf("readKey(%q) = %v, %v; want the key", in, k, err)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"", "no key on stdin"},
		{"\n", "no key on stdin"},
		{"short\n", "invalid job key"},
		{"has a space 0123456789\n", "not printable"},
		{strings.Repeat("k", jobkey.MaxLen+1) + "\n", "invalid job key"},
		{strings.Repeat("k", 5000), "longer than 1024"},
	} {
		_, err := readKey(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("readKey(%.40q) = %v, want an error with %q", c.in, err, c.want)
		}
		if len(c.in) > 4 && strings.Contains(err.Error(), strings.TrimSpace(c.in)) {
			t.Fatalf("readKey's error %q holds the key", err)
		}
	}
}

// FuzzReadKey checks that readKey never panics, accepts exactly what
// jobkey.Parse accepts on the first line, and never puts the key in its
// error.
func FuzzReadKey(f *testing.F) {
	f.Add([]byte("lab-key-0123456789abcdef\n"))
	f.Add([]byte("lab-key-0123456789abcdef\r\n"))
	f.Add([]byte("\n"))
	f.Add(bytes.Repeat([]byte("x"), 1100))
	f.Fuzz(func(t *testing.T, in []byte) {
		k, err := readKey(bytes.NewReader(in))
		line, _, _ := bytes.Cut(in, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		want, werr := jobkey.Parse(string(line))
		if (err == nil) != (werr == nil) {
			t.Fatalf("readKey(%q): %v; jobkey.Parse of its first line: %v", in, err, werr)
		}
		if err == nil && !k.Equal(want) {
			t.Fatalf("readKey(%q) read another key", in)
		}
		if err != nil && len(line) >= jobkey.MinLen && strings.Contains(err.Error(), string(line)) {
			t.Fatalf("readKey's error %q holds the key", err)
		}
	})
}

// FuzzParsePeers checks that parsePeers never panics and that what it
// accepts is what its contract says.
func FuzzParsePeers(f *testing.F) {
	f.Add("10.1.0.11:7000,10.2.0.11:7000", 8)
	f.Add("[::1]:1,[::1]:2,[::1]:3", 1)
	f.Add("10.1.0.11:65535,10.2.0.11:7000", 2)
	f.Fuzz(func(t *testing.T, s string, paths int) {
		paths = 1 + abs(paths)%metaroce.MaxPaths
		peers, err := parsePeers(s, paths)
		if err != nil {
			return
		}
		if len(peers) < 2 || len(peers) > maxRanks {
			t.Fatalf("parsePeers(%q) accepted %d ranks", s, len(peers))
		}
		seen := map[string]bool{}
		for _, p := range peers {
			if !p.IsValid() || p.Port() == 0 || int(p.Port())+paths-1 > 65535 || p.Addr().IsUnspecified() || seen[p.String()] {
				t.Fatalf("parsePeers(%q, %d) accepted %v", s, paths, p)
			}
			seen[p.String()] = true
		}
	})
}

func abs(v int) int {
	if v < 0 {
		return -(v + 1)
	}
	return v
}
