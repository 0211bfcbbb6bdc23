package launcher

import (
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"net"
	"strconv"
	"strings"

	"github.com/gocoll/gocoll/launcher/hosts"
	"github.com/gocoll/gocoll/transport/tcp"
)

// launcherJob starts the Job of a launcher from its variables for the
// rank, the world size (both required; see rankSize) and the local rank
// (optional: -1 where unset).
func (e envReader) launcherJob(launcher, rankVar, sizeVar, localVar string) (Job, error) {
	j := Job{Launcher: launcher}
	var err error
	if j.Rank, j.Size, err = e.rankSize(rankVar, sizeVar); err != nil {
		return j, err
	}
	j.LocalRank, err = e.optInt(localVar, 0, tcp.MaxWorldSize-1, -1)
	return j, err
}

// gocollJob reads GOCOLL_RANK, GOCOLL_WORLD_SIZE and GOCOLL_LOCAL_RANK; the
// job id is GOCOLL_JOB_ID, else one derived from the job key, else
// "gocoll", and the store a loopback port derived from it.
func (e envReader) gocollJob() (Job, error) {
	j, err := e.launcherJob(LauncherGocoll, EnvRank, EnvWorldSize, EnvLocalRank)
	if err != nil {
		return j, err
	}
	j.JobID = e.get(EnvJobID)
	if j.JobID == "" && e.has(EnvJobKey) {
		key, err := e.jobKey()
		if err != nil {
			return j, err
		}
		j.JobID = "k" + hex.EncodeToString(key.Derive(jobIDPurpose)[:8]) // tells nothing of the key
	}
	if j.JobID == "" {
		j.JobID = "gocoll"
	}
	j.Store = loopbackStore(j.JobID)
	return j, nil
}

// openMPIJob reads Open MPI's OMPI_COMM_WORLD_* variables; a job of one
// host has its store on loopback, one of several needs GOCOLL_STORE.
func (e envReader) openMPIJob() (Job, error) {
	j, err := e.launcherJob(LauncherOpenMPI, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK")
	if err != nil {
		return j, err
	}
	j.JobID = "ompi-" + firstSet(e, "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE", "OMPI_MCA_orte_ess_jobid")
	localSize, err := e.optInt("OMPI_COMM_WORLD_LOCAL_SIZE", 1, tcp.MaxWorldSize, 0)
	if err != nil {
		return j, err
	}
	if localSize == j.Size || e.get("OMPI_MCA_orte_num_nodes") == "1" {
		j.Store = loopbackStore(j.JobID)
	} else if !e.has(EnvStore) {
		return j, fmt.Errorf("gocoll: an Open MPI job on several hosts needs %s=<rank 0's host>:<port> (mpirun -x %s=...)", EnvStore, EnvStore)
	}
	return j, nil
}

// torchrunJob reads torchrun's RANK, WORLD_SIZE and LOCAL_RANK; the store
// is MASTER_ADDR:MASTER_PORT, or a port derived from the job id where
// torchrun's agent holds MASTER_PORT.
func (e envReader) torchrunJob() (Job, error) {
	j, err := e.launcherJob(LauncherTorchrun, "RANK", "WORLD_SIZE", "LOCAL_RANK")
	if err != nil {
		return j, err
	}
	addr, port := e.get("MASTER_ADDR"), e.get("MASTER_PORT")
	j.JobID = "torch-" + firstSet(e, "TORCHELASTIC_RUN_ID")
	if j.JobID == "torch-" {
		j.JobID = "torch-" + addr + ":" + port
	}
	switch {
	case addr == "" || port == "":
		if !e.has(EnvStore) {
			return j, fmt.Errorf("gocoll: torchrun variables without MASTER_ADDR and MASTER_PORT: set them, or %s=host:port", EnvStore)
		}
	case strings.EqualFold(e.get("TORCHELASTIC_USE_AGENT_STORE"), "true"):
		// torchrun's agent holds MASTER_PORT with its own store.
		j.Store = net.JoinHostPort(addr, strconv.Itoa(DerivedPort(j.JobID)))
	default:
		if _, err := e.int("MASTER_PORT", 1, 65535); err != nil {
			return j, err
		}
		j.Store = net.JoinHostPort(addr, port)
	}
	return j, nil
}

// slurmJob reads Slurm's SLURM_PROCID, task count and SLURM_LOCALID; the
// store is on loopback for a step of one node, else on its node list's
// first node, at a port derived from the job id.
func (e envReader) slurmJob() (Job, error) {
	sizeVar := "SLURM_STEP_NUM_TASKS"
	if !e.has(sizeVar) {
		sizeVar = "SLURM_NTASKS"
	}
	j, err := e.launcherJob(LauncherSlurm, "SLURM_PROCID", sizeVar, "SLURM_LOCALID")
	if err != nil {
		return j, err
	}
	j.Host = e.get("SLURMD_NODENAME")
	j.JobID = "slurm-" + firstSet(e, "SLURM_JOB_ID", "SLURM_JOBID") + "." + firstSet(e, "SLURM_STEP_ID", "SLURM_STEPID")
	nodes := firstSet(e, "SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST")
	numNodes := firstSet(e, "SLURM_STEP_NUM_NODES", "SLURM_NNODES")
	switch {
	case numNodes == "1":
		j.Store = loopbackStore(j.JobID)
	case nodes != "":
		first, err := hosts.ExpandNodeList(nodes, 1)
		if err != nil {
			return j, fmt.Errorf("gocoll: SLURM_STEP_NODELIST: %v", err)
		}
		j.Store = net.JoinHostPort(first[0], strconv.Itoa(DerivedPort(j.JobID)))
	case !e.has(EnvStore):
		return j, fmt.Errorf("gocoll: Slurm job without SLURM_STEP_NODELIST or SLURM_JOB_NODELIST: set %s=host:port", EnvStore)
	}
	return j, nil
}

// jobIDPurpose derives the job id of a job with a key but no GOCOLL_JOB_ID.
const jobIDPurpose = "gocoll/jobid/v1"

// Derived store ports lie in [derivedPortBase, derivedPortBase+derivedPorts),
// below Linux's default ephemeral range (32768 and up).
const (
	derivedPortBase = 20000
	derivedPorts    = 12000
)

// DerivedPort is the store port of a job whose launcher gave none: a hash
// of the job id, the same on every rank.
func DerivedPort(jobID string) int {
	return derivedPortBase + int(hash64(jobID)%derivedPorts)
}

func loopbackStore(jobID string) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(DerivedPort(jobID)))
}

func hash64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
