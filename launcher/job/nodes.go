package job

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"strconv"

	"github.com/gocoll/gocoll/internal/jobkey"
	"github.com/gocoll/gocoll/launcher"
	"github.com/gocoll/gocoll/launcher/hosts"
	"github.com/gocoll/gocoll/topology"
)

// storeNode: the store is served by node 0's launcher at the rendezvous
// endpoint (Spec.RdzvEndpoint); this node's ranks dial it there.
const storeNode = "node"

// MaxNodes bounds Spec.NNodes.
const MaxNodes = MaxRanks

// checkNodes checks the fields of a job of several nodes (Spec.NNodes)
// and gives it the job id every node agrees on.
func (s *Spec) checkNodes() error {
	if s.NNodes == 0 {
		if s.NodeRank != 0 || s.RdzvEndpoint != "" || s.RdzvID != "" {
			return fmt.Errorf("--node-rank, --rdzv-endpoint and --rdzv-id need --nnodes")
		}
		return nil
	}
	switch {
	case s.NNodes < 0 || s.NNodes > MaxNodes:
		return fmt.Errorf("--nnodes %d: want 1 to %d", s.NNodes, MaxNodes)
	case s.NodeRank < 0 || s.NodeRank >= s.NNodes:
		return fmt.Errorf("--node-rank %d: want 0 to %d (--nnodes %d)", s.NodeRank, s.NNodes-1, s.NNodes)
	case s.NP < 1:
		return fmt.Errorf("--nnodes needs --nproc-per-node (the ranks on each node)")
	case s.NP*s.NNodes > MaxRanks:
		return fmt.Errorf("--nnodes %d x --nproc-per-node %d: at most %d ranks in a job", s.NNodes, s.NP, MaxRanks)
	case len(s.Hosts) > 1:
		return fmt.Errorf("--nnodes: the ranks run on this node; give at most one host (its name in the job)")
	case s.Oversubscribe:
		return fmt.Errorf("--nnodes: --oversubscribe does not apply (each node runs --nproc-per-node ranks)")
	}
	if s.NNodes > 1 && s.RdzvEndpoint == "" {
		return fmt.Errorf("--nnodes %d: give --rdzv-endpoint HOST:PORT, where node 0 serves the store", s.NNodes)
	}
	if s.RdzvEndpoint != "" {
		if err := checkEndpoint(s.RdzvEndpoint); err != nil {
			return err
		}
	}
	key, err := s.nodeKey()
	if err != nil {
		return err
	}
	if s.JobID == "" {
		// The same on every node, and naming neither the key nor the
		// rendezvous id it may come from.
		sum := sha256.Sum256(key.Derive("gocoll job id"))
		s.JobID = "node-job-" + hex.EncodeToString(sum[:8])
	}
	if len(s.Hosts) == 1 {
		h := s.Hosts[0]
		h.Slots = max(h.Slots, s.NP)
		s.Hosts = []topology.HostSlots{h}
	}
	return nil
}

// checkEndpoint checks a rendezvous endpoint: host:port, the port a
// number in [1, 65535].
func checkEndpoint(ep string) error {
	host, port, err := net.SplitHostPort(ep)
	if err != nil {
		return fmt.Errorf("--rdzv-endpoint %q: want HOST:PORT", ep)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("--rdzv-endpoint %q: port %q is not in [1, 65535]", ep, port)
	}
	if err := hosts.CheckHost(host); err != nil {
		return fmt.Errorf("--rdzv-endpoint %q: %v", ep, err)
	}
	return nil
}

// nodeKey is the job key: for a job of one launcher, a fresh one; for a
// job of several nodes, the one every node shares: GOCOLL_JOB_KEY from
// the launcher's environment, else the rendezvous id (Spec.RdzvID),
// which must then be a valid key itself (16 or more printable ASCII
// characters: a secret the nodes' users share, as torchrun's rdzv id).
func (s *Spec) nodeKey() (jobkey.Key, error) {
	if s.NNodes == 0 {
		return jobkey.Generate()
	}
	if text, ok := launcher.LookupIn(s.Environ)(launcher.EnvJobKey); ok && text != "" {
		k, err := jobkey.Parse(text)
		if err != nil {
			return jobkey.Key{}, fmt.Errorf("%s: %v", launcher.EnvJobKey, err)
		}
		return k, nil
	}
	if s.RdzvID == "" {
		return jobkey.Key{}, fmt.Errorf("--nnodes: the nodes need one job key: set %s (the same on every node) or --rdzv-id", launcher.EnvJobKey)
	}
	k, err := jobkey.Parse(s.RdzvID)
	if err != nil {
		return jobkey.Key{}, fmt.Errorf("--rdzv-id serves as the job key without %s: %v", launcher.EnvJobKey, err)
	}
	return k, nil
}

// globalRank is the job's rank of this launcher's r-th rank.
func (p *plan) globalRank(r int) int { return p.spec.NodeRank*len(p.placements) + r }

// worldSize is the job's number of ranks, over every node.
func (p *plan) worldSize() int { return max(1, p.spec.NNodes) * len(p.placements) }

// placeNodeStore places the store of a job of several nodes: node 0's
// launcher serves it at the rendezvous endpoint's port (on the
// endpoint's address if that is loopback, else on every interface, so that its own ranks reach it on loopback); the other nodes' ranks dial the endpoint.
func (p *plan) placeNodeStore() error {
	if p.spec.NodeRank != 0 {
		p.store, p.storeAddr = storeNode, p.spec.RdzvEndpoint
		return nil
	}
	p.store, p.storeBind = StoreLauncher, nodeStoreBind(p.spec.RdzvEndpoint)
	return nil
}
