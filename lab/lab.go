//go:build linux

package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// StateRoot is where labs keep their state: StateRoot/<name>/.
const StateRoot = "/run/gocoll-lab"

// ErrNotRoot is returned by the functions that change namespaces when the
// caller is not root.
var ErrNotRoot = errors.New("lab: needs root (network namespaces, iptables, tc)")

// ErrUnavailable is returned by [Up] when this machine cannot make network
// namespaces or lacks the tools a lab drives (ip, tc, iptables).
var ErrUnavailable = errors.New("lab: network namespaces are not available here")

// ErrNoLab is returned by [Open] when no lab of that name is up.
var ErrNoLab = errors.New("lab: no such lab")

// Lab is a running lab. Its methods may be called from several goroutines
// and, on the same lab, from several processes (gocoll lab commands): the
// changes (Cut, Restore, Shape) and Stats take the lab's lock in turn and
// read its state afresh under it.
type Lab struct {
	plan *plan
	dir  string

	mu sync.Mutex // guards st; held with the lock file's lock
	st state
}

// state is what a lab keeps in StateRoot/<name>/state.json, so that other
// commands (gocoll lab cut, stats, down) can find it.
type state struct {
	Spec  Spec                  `json:"spec"`
	Paths map[string]*pathState `json:"paths"`
	// Delayd holds the pid of each router's delay daemon, by router name.
	Delayd map[string]int `json:"delayd,omitempty"`
	// HostGSOSegs is the gso_max_segs the hosts' interfaces were given
	// (segmentHosts); 0: the kernel's default.
	HostGSOSegs int `json:"host_gso_segs,omitempty"`
}

// pathState is one path's emulation.
type pathState struct {
	Shape [2]Shape `json:"shape"` // by Dir
	Cut   string   `json:"cut,omitempty"`
}

// Cut modes of a path.
const (
	cutNone   = ""
	cutDown   = "down"
	cutSilent = "silent"
)

func checkRoot() error {
	if os.Geteuid() != 0 {
		return ErrNotRoot
	}
	for _, tool := range []string{"ip", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%w: %s is not installed (Debian: apt-get install iproute2)", ErrUnavailable, tool)
		}
	}
	if _, err := exec.LookPath(iptablesRestore); err != nil {
		return fmt.Errorf("%w: %s is not installed (Debian: apt-get install iptables)", ErrUnavailable, iptablesRestore)
	}
	return nil
}

// CheckSpec reports the first field of s out of range, as [Up] would.
func CheckSpec(s Spec) error {
	_, err := s.withDefaults()
	return err
}

// Up builds the lab spec describes and returns it. A lab of the same name
// is torn down first. If building fails, Up tears down what it built and
// returns the error. The lab stays up after the calling process exits,
// until [Down] or [DownName].
func Up(ctx context.Context, spec Spec) (*Lab, error) {
	spec, err := spec.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := checkRoot(); err != nil {
		return nil, err
	}
	if err := DownName(ctx, spec.Name); err != nil {
		return nil, fmt.Errorf("lab %s: tearing down the old lab: %w", spec.Name, err)
	}
	l := &Lab{plan: newPlan(spec), dir: filepath.Join(StateRoot, spec.Name)}
	l.st = state{Spec: spec, Paths: map[string]*pathState{}}
	for _, p := range l.plan.paths {
		l.st.Paths[p.String()] = &pathState{Shape: [2]Shape{spec.shape(), spec.shape()}}
	}
	if err := l.build(ctx); err != nil {
		if derr := l.Down(context.WithoutCancel(ctx)); derr != nil {
			err = fmt.Errorf("%w (and tearing down: %v)", err, derr)
		}
		return nil, err
	}
	return l, nil
}

// Open returns the lab called name, which [Up] built (in this process or
// another). It fails with ErrNoLab if there is none.
func Open(name string) (*Lab, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	dir := filepath.Join(StateRoot, name)
	data, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s is not up", ErrNoLab, name)
	}
	if err != nil {
		return nil, fmt.Errorf("lab %s: %w", name, err)
	}
	var st state
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("lab %s: state: %w", name, err)
	}
	spec, err := st.Spec.withDefaults()
	if err != nil || spec.Name != name {
		return nil, fmt.Errorf("lab %s: bad state file %s", name, filepath.Join(dir, "state.json"))
	}
	l := &Lab{plan: newPlan(spec), dir: dir, st: st}
	for _, p := range l.plan.paths {
		if l.st.Paths[p.String()] == nil {
			return nil, fmt.Errorf("lab %s: state has no path %s", name, p)
		}
	}
	return l, nil
}

// List returns the names of the labs that are up, sorted.
func List() ([]string, error) {
	ents, err := os.ReadDir(StateRoot)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if _, err := os.Stat(filepath.Join(StateRoot, e.Name(), "state.json")); err == nil && CheckName(e.Name()) == nil {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// locked runs fn holding the lab's lock (l.mu and an flock of its lock
// file, so that other processes' changes wait), with l.st read afresh from
// the state file.
func (l *Lab) locked(fn func() error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := os.OpenFile(filepath.Join(l.dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644) // os files are close-on-exec
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: %s is down", ErrNoLab, l.Name())
	}
	if err != nil {
		return fmt.Errorf("lab %s: %w", l.Name(), err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("lab %s: lock: %w", l.Name(), err)
	}
	defer func() { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN) }()
	if data, err := os.ReadFile(filepath.Join(l.dir, "state.json")); err == nil {
		var st state
		if json.Unmarshal(data, &st) == nil && st.Spec.Name == l.Name() && len(st.Paths) == len(l.plan.paths) {
			l.st = st
		}
	}
	return fn()
}

// saveState writes the state file atomically.
func (l *Lab) saveState() error {
	data, err := json.MarshalIndent(l.st, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(l.dir, "state.json.tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("lab %s: %w", l.Name(), err)
	}
	return os.Rename(tmp, filepath.Join(l.dir, "state.json"))
}

// DelaydPid returns the pid of router's delay daemon, or 0 if it has none.
func (l *Lab) DelaydPid(router string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.st.Delayd[router]
}

// Name returns the lab's name.
func (l *Lab) Name() string { return l.plan.spec.Name }

// Spec returns the lab's spec, defaults filled in.
func (l *Lab) Spec() Spec { return l.plan.spec }

// Hosts returns the lab's hosts, site by site.
func (l *Lab) Hosts() []Node { return append([]Node(nil), l.plan.hosts...) }

// Routers returns the sites' routers, by site.
func (l *Lab) Routers() []Node { return append([]Node(nil), l.plan.routers...) }

// Paths returns the lab's paths, pair of sites by pair, then by number.
func (l *Lab) Paths() []Path { return append([]Path(nil), l.plan.paths...) }

// Node returns the node called name ("s1h2", "s2r", or its namespace).
func (l *Lab) Node(name string) (Node, error) { return l.plan.node(name) }

// ParsePath parses a path of this lab (see the package function).
func (l *Lab) ParsePath(s string) (Path, error) {
	return ParsePath(s, l.plan.spec.Sites, l.plan.spec.Paths)
}

// Hostfile returns a gocoll hostfile (see launcher/hosts) that lists every
// host with slots slots, its site and its address; the host names are
// the namespaces, for gocoll run --rsh 'ip netns exec {host}'.
func (l *Lab) Hostfile(slots int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# gocoll lab %s: %d sites x %d hosts\n", l.Name(), l.plan.spec.Sites, l.plan.spec.HostsPerSite)
	for _, h := range l.plan.hosts {
		fmt.Fprintf(&b, "%s slots=%d site=%s addr=%s\n", h.NS, slots, SiteName(h.Site), h.Addr)
	}
	return b.String()
}

// Command returns a command that runs argv in node's namespace (through
// ip netns exec), not started.
func (l *Lab) Command(ctx context.Context, node string, argv ...string) (*exec.Cmd, error) {
	n, err := l.plan.node(node)
	if err != nil {
		return nil, err
	}
	if len(argv) == 0 {
		return nil, errors.New("lab: no command")
	}
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", n.NS}, argv...)...), nil
}

// Exec runs argv in node's namespace and returns its combined output.
func (l *Lab) Exec(ctx context.Context, node string, argv ...string) ([]byte, error) {
	cmd, err := l.Command(ctx, node, argv...)
	if err != nil {
		return nil, err
	}
	return cmd.CombinedOutput()
}

// Do runs fn on an OS thread inside node's network namespace and returns
// its error. Sockets fn opens stay in that namespace however they are used
// later; goroutines fn starts run outside it. The thread is retired
// afterwards, so the namespace never leaks into other goroutines.
func (l *Lab) Do(node string, fn func() error) error {
	n, err := l.plan.node(node)
	if err != nil {
		return err
	}
	return inNetns(n.NS, fn)
}

// Down tears the lab down: it kills every process left in the lab's
// namespaces, deletes them (and with them the lab's interfaces, routes,
// qdiscs and iptables rules) and its state. It is idempotent.
func (l *Lab) Down(ctx context.Context) error { return DownName(ctx, l.Name()) }

// DownName tears down the lab called name, as [Lab.Down], whether or not
// its state file is intact: it finds the lab's namespaces by their names.
func DownName(ctx context.Context, name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return ErrNotRoot
	}
	nss := labNamespaces(name)
	inodes := map[uint64]bool{}
	for _, ns := range nss {
		if ino, ok := nsInode(ns); ok {
			inodes[ino] = true
		}
	}
	var errs []error
	if left := killIn(inodes, time.Second); len(left) > 0 {
		errs = append(errs, fmt.Errorf("lab %s: processes %v would not die", name, left))
	}
	for _, ns := range nss {
		if err := delNetns(ctx, ns); err != nil {
			errs = append(errs, err)
		}
	}
	if err := os.RemoveAll(filepath.Join(StateRoot, name)); err != nil {
		errs = append(errs, err)
	}
	if left := labNamespaces(name); len(left) > 0 {
		errs = append(errs, fmt.Errorf("lab %s: namespaces %v are left", name, left))
	}
	return errors.Join(errs...)
}

var labNodeRE = regexp.MustCompile(`^s[0-9]+(r|h[0-9]+)$`)

// labNamespaces returns the namespaces of lab name: "<name>-sSr" and
// "<name>-sShH". Lab names have no '-', so no other lab's match.
func labNamespaces(name string) []string {
	ents, err := os.ReadDir(netnsDir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if node, ok := strings.CutPrefix(e.Name(), name+"-"); ok && labNodeRE.MatchString(node) {
			out = append(out, e.Name())
		}
	}
	return out
}
