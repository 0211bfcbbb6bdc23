package topology

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/gocoll/gocoll/internal/affinity"
	"github.com/klauspost/cpuid/v2"
)

// This file is the only code in the package that asks the machine anything:
// the hostname, the network interfaces, the CPU and the machine's identity. Everything else is a
// pure function of its arguments.

// HostInfo is the part of a RankInfo that DetectLocal can find out on its
// own; the rank numbers and address come from the launcher.
type HostInfo struct {
	Host string
	Site string
	NICs []NIC
	CPU  CPUInfo
}

// RankInfo returns the rank entry for a rank on this host.
func (h HostInfo) RankInfo(rank, localRank int, addr string) RankInfo {
	return RankInfo{
		Rank: rank, Host: h.Host, Site: h.Site, LocalRank: localRank, Addr: addr,
		NICs: cloneNICs(h.NICs), CPU: h.CPU,
	}
}

// DetectLocal describes the machine it runs on. The host is hostOverride,
// or the kernel's hostname (os.Hostname) if that is empty; the site is
// siteOverride, or DefaultSite if that is empty. The NICs are those of
// net.Interfaces with their addresses, in the kernel's order, and the CPU is
// read with CPUID (or its equivalent on arm64).
//
// DetectLocal returns an error if the hostname cannot be read, a name is
// malformed (see [Topology.Validate]), or the interfaces cannot be listed or
// exceed MaxNICs or MaxNICAddrs. It does not block on the network.
func DetectLocal(hostOverride, siteOverride string) (HostInfo, error) {
	host := hostOverride
	if host == "" {
		h, err := os.Hostname()
		if err != nil {
			return HostInfo{}, fmt.Errorf("topology: detect hostname: %w", err)
		}
		host = h
	}
	info := HostInfo{Host: host, Site: siteKey(siteOverride), CPU: detectCPU()}
	nics, err := detectNICs()
	if err != nil {
		return HostInfo{}, err
	}
	info.NICs = nics
	// Check the result the way a topology holding it will be checked.
	if err := info.RankInfo(0, 0, "").validate(); err != nil {
		return HostInfo{}, fmt.Errorf("topology: detect: %w", err)
	}
	return info, nil
}

func detectNICs() ([]NIC, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("topology: detect interfaces: %w", err)
	}
	if len(ifaces) > MaxNICs {
		return nil, fmt.Errorf("topology: detect interfaces: %d interfaces, more than the limit of %d", len(ifaces), MaxNICs)
	}
	nics := make([]NIC, 0, len(ifaces))
	for _, iface := range ifaces {
		addrs, err := iface.Addrs()
		if err != nil {
			return nil, fmt.Errorf("topology: detect addresses of %s: %w", iface.Name, err)
		}
		nics = append(nics, nicOf(iface, addrs))
	}
	if len(nics) == 0 {
		return nil, nil
	}
	return nics, nil
}

// nicOf converts one interface. Addresses that are not IP prefixes (none on
// Linux) are left out.
func nicOf(iface net.Interface, addrs []net.Addr) NIC {
	nic := NIC{
		Name:     iface.Name,
		MTU:      iface.MTU,
		Up:       iface.Flags&net.FlagUp != 0,
		Running:  iface.Flags&net.FlagRunning != 0,
		Loopback: iface.Flags&net.FlagLoopback != 0,
	}
	for _, a := range addrs {
		if ipnet, ok := a.(*net.IPNet); ok {
			nic.Addrs = append(nic.Addrs, ipnet.String())
		}
	}
	return nic
}

// bootIDFile is the kernel's boot id: new at every boot, one for every
// process of that kernel, whatever its network namespace or container.
var bootIDFile = "/proc/sys/kernel/random/boot_id"

// machineID names the running kernel: a hash of its boot id, "" if it
// cannot be read (the rank's Host then stands for its machine). Two
// processes get the same name exactly when they run on one kernel, so
// share its cores, as the network namespaces of a lab or the containers
// of one host do. The installation's machine id (/etc/machine-id) is left
// out on purpose: containers of one kernel may each have their own, which
// would split one machine's cores into several machines; the boot id is
// random (128 bits), so two kernels do not share one.
func machineID() string {
	b, err := os.ReadFile(bootIDFile)
	id := strings.TrimSpace(string(b))
	if err != nil || id == "" || len(id) > 256 {
		return ""
	}
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:8])
}

// detectCores returns the CPUs the process may run on now (its affinity
// mask, after any binding of the rank: so a rank that binds itself as it
// joins reports the set it will run on) as a cpu list and their count; on
// systems whose mask cannot be read, no list and runtime.NumCPU.
func detectCores() (string, int) {
	var cpus []int
	for _, core := range affinity.Cores() {
		cpus = append(cpus, core...)
	}
	if len(cpus) == 0 {
		return "", runtime.NumCPU()
	}
	slices.Sort(cpus)
	return affinity.Format(cpus), len(cpus)
}

// cgroupRoot is where the cgroup file systems are mounted.
var cgroupRoot = "/sys/fs/cgroup"

// detectCPULimit is cgroupCPULimit of this process (0 where
// /proc/self/cgroup cannot be read).
func detectCPULimit() float64 {
	return cpuLimitAt("/proc/self/cgroup", cgroupRoot)
}

// cpuLimitAt is cgroupCPULimit of the process whose cgroup list is the
// file self (as /proc/self/cgroup), with the cgroup file systems mounted
// at root; 0 where self cannot be read.
func cpuLimitAt(self, root string) float64 {
	list, err := os.ReadFile(self)
	if err != nil {
		return 0
	}
	return cgroupCPULimit(string(list), func(p string) (string, bool) {
		b, err := os.ReadFile(filepath.Join(root, p))
		return string(b), err == nil
	})
}

// CPUQuota returns how many processors the cgroup CPU limit of this
// process (cgroup v2 cpu.max, v1 cpu.cfs_quota_us over cpu.cfs_period_us,
// of its cgroup and those above it) keeps busy: the limit rounded up to
// whole CPUs, at least 1. 0: no limit, or none that can be read (no
// cgroups, not Linux, a file that does not parse): never an error.
// A limit says nothing of which CPUs: it caps how many the affinity mask
// allows.
func CPUQuota() int {
	return CPUQuotaAt("/proc/self/cgroup", cgroupRoot)
}

// CPUQuotaAt is CPUQuota read from the cgroup list self (a file as
// /proc/self/cgroup) and the cgroup file systems mounted at root (as
// /sys/fs/cgroup): a test's fake tree.
func CPUQuotaAt(self, root string) int {
	return quotaCPUs(cpuLimitAt(self, root))
}

func detectCPU() CPUInfo {
	c := cpuid.CPU
	has := c.Supports
	cpus, cores := detectCores()
	cpus, cores = limitCores(cpus, cores, detectCPULimit()) // the cgroup's CPU limit, where it allows fewer
	return CPUInfo{
		Machine:        machineID(),
		Cores:          cores,
		CPUs:           cpus,
		Arch:           runtime.GOARCH,
		Vendor:         cpuVendor(c),
		Brand:          strings.TrimSpace(c.BrandName),
		PhysicalCores:  max(c.PhysicalCores, 0),
		LogicalCores:   max(c.LogicalCores, 0),
		ThreadsPerCore: max(c.ThreadsPerCore, 0),
		CacheLineBytes: max(c.CacheLine, 0),
		L1DBytes:       max(c.Cache.L1D, 0), // cpuid reports -1 when unknown
		L2Bytes:        max(c.Cache.L2, 0),
		L3Bytes:        max(c.Cache.L3, 0),
		Features: CPUFeatures{
			SSE2: has(cpuid.SSE2), SSE41: has(cpuid.SSE4), SSE42: has(cpuid.SSE42),
			AVX: has(cpuid.AVX), AVX2: has(cpuid.AVX2), FMA3: has(cpuid.FMA3), F16C: has(cpuid.F16C),
			AVX512F: has(cpuid.AVX512F), AVX512BW: has(cpuid.AVX512BW), AVX512VL: has(cpuid.AVX512VL),
			AVX512BF16: has(cpuid.AVX512BF16), AVX512FP16: has(cpuid.AVX512FP16), AVXVNNI: has(cpuid.AVXVNNI),
			ASIMD: has(cpuid.ASIMD), ASIMDHP: has(cpuid.ASIMDHP), ASIMDDP: has(cpuid.ASIMDDP),
			BF16: has(cpuid.BF16), SVE: has(cpuid.SVE), SVE2: has(cpuid.SVE2),
		},
	}
}

// cpuVendor names the vendor as cpuid does ("Intel", "AMD", "ARM", ...), or
// by the raw vendor string if cpuid does not know it.
func cpuVendor(c cpuid.CPUInfo) string {
	if c.VendorID == cpuid.VendorUnknown {
		return strings.TrimSpace(c.VendorString)
	}
	return c.VendorID.String()
}
