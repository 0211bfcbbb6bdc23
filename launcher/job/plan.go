package job

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gocoll/gocoll/internal/affinity"
	"github.com/gocoll/gocoll/internal/jobkey"
	"github.com/gocoll/gocoll/launcher"
	"github.com/gocoll/gocoll/launcher/hosts"
	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport/tcp"
)

// resolveTimeout bounds the check that remote host names resolve.
const resolveTimeout = 5 * time.Second

// Bounds of a job's size, checked before any rank starts.
const (
	// MaxRanks is the largest job: the largest world a rank accepts
	// (tcp.MaxWorldSize, which launcher.Init checks).
	MaxRanks = tcp.MaxWorldSize
	// FilesPerRank is how many files the launcher may hold open for each
	// rank it starts: the read ends of its stdout and stderr, its stdin
	// (remote ranks), the process's pidfd, its connection to a store the
	// launcher serves, and one to spare.
	FilesPerRank = 6
	// FilesReserved are the launcher's files besides its ranks'.
	FilesReserved = 64
)

// plan is a checked Spec: where each rank runs, how it is started, and
// where the store lives.
type plan struct {
	spec       Spec
	placements []topology.Placement
	local      []bool // by rank: started here, not through rsh
	rsh        rshTemplate
	store      string              // StoreLauncher or StoreRank0
	storeAddr  string              // what the ranks dial; for StoreLauncher set once the launcher listens
	storeBind  string              // StoreLauncher: where the launcher listens
	jobKey     jobkey.Key          // generated per job; on no command line (see command)
	cpus       [][]int             // by rank: the CPUs a local rank is bound to (see bindCPUs); nil: none
	remoteBind []launcher.BindCore // by rank: the binding a remote rank makes itself (see bindCPUs); nil: none
}

// makePlan checks s against its host list and decides everything Run
// needs before starting a process. Errors are one line.
func makePlan(ctx context.Context, s Spec) (*plan, error) {
	hostList := s.Hosts
	if hostList == nil {
		hostList = []topology.HostSlots{{Host: localName(s.LocalNames), Slots: s.NP}}
	}
	for _, h := range hostList {
		if err := hosts.CheckHost(h.Host); err != nil {
			return nil, err
		}
		if h.Site != "" {
			if err := hosts.CheckName("site", h.Site); err != nil {
				return nil, fmt.Errorf("host %s: %v", h.Host, err)
			}
		}
	}
	if s.NP > MaxRanks {
		return nil, fmt.Errorf("-np %d: at most %d ranks in a job", s.NP, MaxRanks)
	}
	placements, err := topology.AssignRanks(hostList)
	if err != nil {
		return nil, err
	}
	np := s.NP
	if np == 0 {
		np = len(placements)
	}
	if np > len(placements) {
		if !s.Oversubscribe {
			return nil, fmt.Errorf("-np %d but the hosts have %d slots (--oversubscribe allows more ranks than slots)", np, len(placements))
		}
		if hostList, err = oversubscribe(hostList, s.MaxSlots, np); err != nil {
			return nil, err
		}
		if placements, err = topology.AssignRanks(hostList); err != nil {
			return nil, err
		}
	}
	if err := startSupported(); err != nil {
		return nil, err
	}
	if err := checkFiles(np); err != nil {
		return nil, err
	}
	rsh, err := parseRsh(s.Rsh)
	if err != nil {
		return nil, err
	}
	key, err := s.nodeKey()
	if err != nil {
		return nil, err
	}
	p := &plan{spec: s, placements: mapPlacements(placements, np, s.MapBy), rsh: rsh, jobKey: key}
	p.local = make([]bool, np)
	for i, pl := range p.placements {
		p.local[i] = isLocal(pl, s.LocalNames)
	}
	if p.cpus, p.remoteBind, err = bindCPUs(s, p.placements, p.local, affinity.Cores()); err != nil {
		return nil, err
	}
	if err := p.checkPrograms(); err != nil {
		return nil, err
	}
	if err := p.checkHosts(ctx); err != nil {
		return nil, err
	}
	if err := p.placeStore(); err != nil {
		return nil, err
	}
	if err := checkExportValues(s); err != nil {
		return nil, err
	}
	return p, p.checkRankEnv()
}

// oversubscribe gives the hosts np slots in all: one more to each in turn,
// in list order, up to its maxSlots (0 or absent: no bound).
func oversubscribe(list []topology.HostSlots, maxSlots map[string]int, np int) ([]topology.HostSlots, error) {
	list = slices.Clone(list)
	total := 0
	for _, h := range list {
		total += h.Slots
	}
	for total < np {
		grew := false
		for i := range list {
			if m := maxSlots[list[i].Host]; (m == 0 || list[i].Slots < m) && total < np {
				list[i].Slots++
				total++
				grew = true
			}
		}
		if !grew {
			return nil, fmt.Errorf("-np %d but the hosts' max_slots allow %d ranks", np, total)
		}
	}
	return list, nil
}

// checkRankEnv checks, once before any rank starts, the environment ranks
// will read (launcher.ParseEnv: every GOCOLL_* value, GOCOLL_TRANSPORT,
// GOCOLL_DEBUG, the timeouts...), so that a bad value is one error from
// the launcher rather than one from each rank: that of the first local
// rank (the launcher's environment, the exports and gocoll's variables)
// and of the first remote one (the exports and gocoll's variables).
func (p *plan) checkRankEnv() error {
	checked := map[bool]bool{}
	for r := range p.placements {
		if checked[p.local[r]] {
			continue
		}
		checked[p.local[r]] = true
		env := append(p.rankVars(r), launcher.EnvJobKey+"="+p.jobKey.Reveal())
		if p.local[r] {
			env = append(append([]string(nil), p.spec.Environ...), env...)
		}
		if p.storeAddr == "" { // the launcher's store: its port is known once it listens
			env = append(env, launcher.EnvStore+"=127.0.0.1:1")
		}
		if _, err := launcher.ParseEnv(launcher.LookupIn(env)); err != nil {
			return err
		}
	}
	return nil
}

func localName(names []string) string {
	if len(names) > 0 && names[0] != "" {
		return names[0]
	}
	return "localhost"
}

// isLocal reports whether a rank placed at pl runs on this host.
func isLocal(pl topology.Placement, names []string) bool {
	switch pl.Host {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	if ip := net.ParseIP(pl.Addr); ip != nil && ip.IsLoopback() {
		return true
	}
	return slices.Contains(names, pl.Host)
}

func (p *plan) allLocal() bool { return !slices.Contains(p.local, false) }

// checkPrograms makes sure a local rank's program can be run.
func (p *plan) checkPrograms() error {
	if !slices.Contains(p.local, true) {
		return nil
	}
	if _, err := exec.LookPath(p.spec.Program); err != nil {
		return fmt.Errorf("program %q: %v", p.spec.Program, unwrapExecError(err))
	}
	return nil
}

// unwrapExecError drops what the message would repeat (the program name).
func unwrapExecError(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		err = ee.Err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err
}

// checkHosts makes sure remote host names resolve where ssh would need
// them to; other rsh commands (ip netns exec, ...) name hosts their own way.
func (p *plan) checkHosts(ctx context.Context) error {
	if !p.rsh.remoteShell {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	checked := map[string]bool{}
	for i, pl := range p.placements {
		if p.local[i] || checked[pl.Host] {
			continue
		}
		checked[pl.Host] = true
		if _, err := net.DefaultResolver.LookupHost(ctx, pl.Host); err != nil {
			return fmt.Errorf("host %q: unknown (%v)", pl.Host, err)
		}
	}
	return nil
}

// placeStore decides where the store lives and how ranks reach it.
func (p *plan) placeStore() error {
	if p.spec.RdzvEndpoint != "" {
		return p.placeNodeStore()
	}
	mode := p.spec.Store
	if mode == StoreAuto {
		mode = StoreRank0
		if p.allLocal() {
			mode = StoreLauncher
		}
	}
	p.store = mode
	switch {
	case mode == StoreLauncher && p.allLocal():
		p.storeBind = "127.0.0.1:0"
	case mode == StoreLauncher:
		p.storeBind = ":0"
	default:
		r0 := p.placements[0]
		host := r0.Addr
		if host == "" {
			host = r0.Host
		}
		if ip := net.ParseIP(host); (host == "localhost" || ip != nil && ip.IsLoopback()) && !p.allLocal() {
			return fmt.Errorf("rank 0 runs on %s, which the remote ranks cannot reach for the store: list its host by name or give addr= in the hostfile", host)
		}
		p.storeAddr = net.JoinHostPort(host, strconv.Itoa(launcher.DerivedPort(p.spec.JobID)))
	}
	return nil
}

// launcherStoreAddr is the address ranks dial for a store the launcher
// serves at bound.
func (p *plan) launcherStoreAddr(bound *net.TCPAddr) string {
	host := "127.0.0.1"
	if !p.allLocal() {
		host = localName(p.spec.LocalNames)
	}
	return net.JoinHostPort(host, strconv.Itoa(bound.Port))
}

// checkExportValues makes sure every -x NAME has a value to pass.
func checkExportValues(s Spec) error {
	lookup := launcher.LookupIn(s.Environ)
	for _, e := range s.Export {
		if _, _, hasValue := strings.Cut(e, "="); hasValue {
			continue
		}
		if _, ok := lookup(e); !ok {
			return fmt.Errorf("-x %s: not set in the launcher's environment (use -x %s=value)", e, e)
		}
	}
	return nil
}

// rankVars returns the variables rank r is started with: the exports, then
// gocoll's own (which win), but for the job key (see command).
func (p *plan) rankVars(r int) []string {
	lookup := launcher.LookupIn(p.spec.Environ)
	var vars []string
	for _, e := range p.spec.Export {
		if name, _, _ := strings.Cut(e, "="); name == launcher.EnvJobKey {
			continue // gocoll's own key wins, and stays off command lines
		}
		if _, _, ok := strings.Cut(e, "="); ok {
			vars = append(vars, e)
		} else if v, ok := lookup(e); ok {
			vars = append(vars, e+"="+v)
		}
	}
	pl := p.placements[r]
	serve := "0"
	if p.store == StoreRank0 {
		serve = "1"
	}
	vars = append(vars,
		launcher.EnvRank+"="+strconv.Itoa(p.globalRank(r)),
		launcher.EnvWorldSize+"="+strconv.Itoa(p.worldSize()),
		launcher.EnvLocalRank+"="+strconv.Itoa(pl.LocalRank),
		launcher.EnvHost+"="+pl.Host,
		launcher.EnvSite+"="+pl.Site,
		launcher.EnvJobID+"="+p.spec.JobID,
		launcher.EnvStore+"="+p.storeAddr,
		launcher.EnvStoreServe+"="+serve,
	)
	if pl.Addr != "" {
		vars = append(vars, launcher.EnvAddr+"="+pl.Addr)
	}
	if !p.local[r] {
		vars = append(vars, launcher.EnvWatchStdin+"=1")
		if p.remoteBind != nil {
			vars = append(vars, launcher.EnvBindCore+"="+p.remoteBind[r].String())
		}
	}
	return vars
}

// command returns how to start rank r: the argv, and the environment of
// the process started here. The job key is in that environment, never in
// argv: a local rank reads it there (GOCOLL_JOB_KEY); a remote rank's
// command line says GOCOLL_JOB_KEY_STDIN=1 instead, and startProc writes
// the key from the environment as the first line of the remote command's
// stdin (see keyLine), which ssh carries to the rank.
func (p *plan) command(r int) (argv, env []string) {
	vars := p.rankVars(r)
	env = append(append([]string(nil), p.spec.Environ...), launcher.EnvJobKey+"="+p.jobKey.Reveal())
	if p.local[r] {
		argv = append([]string{p.spec.Program}, p.spec.Args...)
		return argv, append(env, vars...)
	}
	remote := append(append([]string{"env"}, vars...), launcher.EnvJobKeyStdin+"=1", p.spec.Program)
	remote = append(remote, p.spec.Args...)
	return p.rsh.command(p.placements[r].Host, remote), env
}
