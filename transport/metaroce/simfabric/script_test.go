package simfabric

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gocoll/gocoll/internal/scripttest"
	"github.com/stretchr/testify/require"
)

// TestScripts runs the scenarios in testdata/*.txt; `go test -update`
// rewrites their expected outputs. The commands (see scriptEnv.handle):
//
//	nodes 3
//	link ab rate=1MB delay=1ms queue=2KB ecn=1KB loss=1% jitter=10us
//	path p 0->1 links=(ab,cd)
//	send p size=1000 n=3 every=100us
//	advance 5ms
//	run
//	cut ab at=10ms / restore ab at=20ms / set ab at=5ms loss=100% rate=2MB
//	stats ab p
func TestScripts(t *testing.T) {
	scripttest.WalkFiles(t, "testdata", func(t *testing.T, file string) {
		f, err := New(Config{Seed: 1})
		require.NoError(t, err)
		e := &scriptEnv{fab: f, links: map[string]LinkID{}, paths: map[string]PathID{}}
		scripttest.RunFile(t, file, e.handle)
	})
}

type scriptEnv struct {
	fab       *Fabric
	links     map[string]LinkID
	paths     map[string]PathID
	pathNames []string
	sent      [][]byte // payloads by sequence number
	out       strings.Builder
}

func (e *scriptEnv) handle(t *testing.T, c *scripttest.Cmd) string {
	e.out.Reset()
	switch c.Name {
	case "nodes":
		for range mustInt(t, c, c.Positional()) {
			_, err := e.fab.AddNode()
			require.NoError(t, err)
		}
	case "link":
		e.addLink(t, c)
	case "path":
		e.addPath(t, c)
	case "send":
		e.send(t, c)
	case "advance":
		by, err := scripttest.ParseDuration(one(t, c, c.Positional()))
		require.NoError(t, err, c.Pos())
		e.advance(t, e.fab.Now()+by)
	case "run":
		for next, ok := e.fab.NextEventTime(); ok; next, ok = e.fab.NextEventTime() {
			e.advance(t, next)
		}
	case "cut", "restore", "set":
		e.fault(t, c)
	case "stats":
		e.stats(t, c)
	default:
		c.Fatalf(t, "unknown command")
	}
	return e.out.String()
}

func one(t *testing.T, c *scripttest.Cmd, words []string) string {
	if len(words) != 1 {
		c.Fatalf(t, "want one bare argument, got %q", words)
	}
	return words[0]
}

func mustInt(t *testing.T, c *scripttest.Cmd, words []string) int {
	n, err := scripttest.ParseInt(one(t, c, words))
	if err != nil {
		c.Fatalf(t, "%v", err)
	}
	return n
}

// linkConfig reads link settings from c on top of base.
func linkConfig(t *testing.T, c *scripttest.Cmd, base LinkConfig) LinkConfig {
	base.Rate = c.SizeOr(t, "rate", base.Rate)
	base.Delay = c.DurationOr(t, "delay", base.Delay)
	base.Jitter = c.DurationOr(t, "jitter", base.Jitter)
	base.QueueBytes = int(c.SizeOr(t, "queue", int64(base.QueueBytes)))
	base.ECNThresholdBytes = int(c.SizeOr(t, "ecn", int64(base.ECNThresholdBytes)))
	base.Loss = c.FloatOr(t, "loss", base.Loss)
	base.Dup = c.FloatOr(t, "dup", base.Dup)
	base.Corrupt = c.FloatOr(t, "corrupt", base.Corrupt)
	base.Reorder = c.FloatOr(t, "reorder", base.Reorder)
	base.ReorderDelay = c.DurationOr(t, "reorder-delay", base.ReorderDelay)
	return base
}

func (e *scriptEnv) addLink(t *testing.T, c *scripttest.Cmd) {
	name := one(t, c, c.Positional())
	id, err := e.fab.AddLink(linkConfig(t, c, LinkConfig{}))
	if err != nil {
		fmt.Fprintf(&e.out, "error: %v\n", err)
		return
	}
	e.links[name] = id
}

func (e *scriptEnv) addPath(t *testing.T, c *scripttest.Cmd) {
	words := c.Positional()
	if len(words) != 2 {
		c.Fatalf(t, "want: path NAME FROM->TO links=(...)")
	}
	var from, to NodeID
	if _, err := fmt.Sscanf(words[1], "%d->%d", &from, &to); err != nil {
		c.Fatalf(t, "bad FROM->TO %q", words[1])
	}
	var links []LinkID
	for _, name := range c.Strings(t, "links") {
		id, ok := e.links[name]
		if !ok {
			c.Fatalf(t, "unknown link %q", name)
		}
		links = append(links, id)
	}
	id, err := e.fab.AddPath(from, to, links...)
	if err != nil {
		fmt.Fprintf(&e.out, "error: %v\n", err)
		return
	}
	e.paths[words[0]] = id
	e.pathNames = append(e.pathNames, words[0])
}

// send sends n packets whose first 8 bytes are a sequence number.
func (e *scriptEnv) send(t *testing.T, c *scripttest.Cmd) {
	name := one(t, c, c.Positional())
	p, ok := e.paths[name]
	if !ok {
		c.Fatalf(t, "unknown path %q", name)
	}
	size, n, every := int(c.SizeOr(t, "size", 1000)), c.IntOr(t, "n", 1), c.DurationOr(t, "every", 0)
	for i := range n {
		if i > 0 && every > 0 {
			e.advance(t, e.fab.Now()+every)
		}
		pkt := make([]byte, max(size, 8))
		binary.BigEndian.PutUint64(pkt, uint64(len(e.sent)))
		e.sent = append(e.sent, pkt)
		if err := e.fab.Send(p, pkt); err != nil {
			fmt.Fprintf(&e.out, "error: %v\n", err)
		}
	}
}

// advance moves to t and prints each delivery.
func (e *scriptEnv) advance(t *testing.T, to time.Duration) {
	require.NoError(t, e.fab.AdvanceTo(to, func(d Delivery) {
		seq := binary.BigEndian.Uint64(d.Data)
		fmt.Fprintf(&e.out, "%v: %s #%d %dB", d.At, e.pathNames[d.Path], seq, len(d.Data))
		if seq >= uint64(len(e.sent)) || !bytes.Equal(d.Data, e.sent[seq]) {
			e.out.WriteString(" corrupted")
		}
		if d.CE {
			e.out.WriteString(" CE")
		}
		e.out.WriteString("\n")
	}))
}

func (e *scriptEnv) fault(t *testing.T, c *scripttest.Cmd) {
	name := one(t, c, c.Positional())
	l, ok := e.links[name]
	if !ok {
		c.Fatalf(t, "unknown link %q", name)
	}
	ft := Fault{At: c.DurationOr(t, "at", e.fab.Now()), Link: l, Kind: Cut}
	switch c.Name {
	case "restore":
		ft.Kind = Restore
	case "set":
		cfg, _, err := e.fab.LinkConfig(l)
		require.NoError(t, err)
		ft.Kind, ft.Config = SetConfig, linkConfig(t, c, cfg)
	}
	if err := e.fab.Schedule(ft); err != nil {
		fmt.Fprintf(&e.out, "error: %v\n", err)
	}
}

// stats prints the non-zero counters of the named links and paths.
func (e *scriptEnv) stats(t *testing.T, c *scripttest.Cmd) {
	all := e.fab.Stats()
	for _, name := range c.Positional() {
		var s Stats
		if l, ok := e.links[name]; ok {
			s = all.Links[l]
		} else if p, ok := e.paths[name]; ok {
			s = all.Paths[p]
		} else {
			c.Fatalf(t, "unknown link or path %q", name)
		}
		fmt.Fprintf(&e.out, "%s:", name)
		for _, f := range []struct {
			name string
			c    Count
		}{{"sent", s.Sent}, {"delivered", s.Delivered}, {"queue-full", s.DroppedQueueFull},
			{"loss", s.DroppedLoss}, {"cut", s.DroppedCut}, {"corrupted", s.Corrupted},
			{"duplicated", s.Duplicated}, {"ce", s.ECNMarked}} {
			if f.c.Packets > 0 {
				fmt.Fprintf(&e.out, " %s=%d/%dB", f.name, f.c.Packets, f.c.Bytes)
			}
		}
		if s.MaxQueueBytes > 0 {
			fmt.Fprintf(&e.out, " max-queue=%dB", s.MaxQueueBytes)
		}
		e.out.WriteString("\n")
	}
}
