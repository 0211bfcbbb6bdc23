package topology

import (
	"net"
	"os"
	"runtime"
	"slices"
	"testing"

	"github.com/gocoll/gocoll/internal/affinity"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/cpu"
)

func TestDetectLocal(t *testing.T) {
	info, err := DetectLocal("", "")
	require.NoError(t, err)
	hostname, err := os.Hostname()
	require.NoError(t, err)
	require.Equal(t, hostname, info.Host)
	require.Equal(t, DefaultSite, info.Site)

	ifaces, err := net.Interfaces()
	require.NoError(t, err)
	require.Len(t, info.NICs, len(ifaces))
	for i, nic := range info.NICs {
		require.Equal(t, ifaces[i].Name, nic.Name)
		require.Equal(t, ifaces[i].Flags&net.FlagLoopback != 0, nic.Loopback)
	}

	// What is detected forms a valid topology.
	topo, err := New([]RankInfo{info.RankInfo(0, 0, ""), info.RankInfo(1, 1, "")})
	require.NoError(t, err)
	require.Equal(t, 2, topo.LocalSize(0))
	_, err = Marshal(topo)
	require.NoError(t, err)
	require.Equal(t, runtime.GOARCH, info.CPU.Arch)
}

func TestDetectLocalOverrides(t *testing.T) {
	info, err := DetectLocal("node-7", "east")
	require.NoError(t, err)
	require.Equal(t, "node-7", info.Host)
	require.Equal(t, "east", info.Site)

	_, err = DetectLocal("bad\x00host", "")
	require.ErrorContains(t, err, "unprintable")
	_, err = DetectLocal("", " east")
	require.ErrorContains(t, err, "leading or trailing space")
}

// The SIMD flags agree with golang.org/x/sys/cpu, an independent detector
// that also checks operating system support.
func TestDetectCPUAgreesWithXSysCPU(t *testing.T) {
	f := detectCPU().Features
	switch runtime.GOARCH {
	case "amd64":
		require.Equal(t, cpu.X86.HasSSE2, f.SSE2, "SSE2")
		require.Equal(t, cpu.X86.HasSSE41, f.SSE41, "SSE4.1")
		require.Equal(t, cpu.X86.HasSSE42, f.SSE42, "SSE4.2")
		require.Equal(t, cpu.X86.HasAVX, f.AVX, "AVX")
		require.Equal(t, cpu.X86.HasAVX2, f.AVX2, "AVX2")
		require.Equal(t, cpu.X86.HasFMA, f.FMA3, "FMA3")
		require.Equal(t, cpu.X86.HasAVX512F, f.AVX512F, "AVX512F")
		require.Equal(t, cpu.X86.HasAVX512BW, f.AVX512BW, "AVX512BW")
		require.Equal(t, cpu.X86.HasAVX512VL, f.AVX512VL, "AVX512VL")
		require.Equal(t, cpu.X86.HasAVX512BF16, f.AVX512BF16, "AVX512BF16")
		require.True(t, f.SSE2, "every amd64 CPU has SSE2")
		require.False(t, f.ASIMD)
	case "arm64":
		require.Equal(t, cpu.ARM64.HasASIMD, f.ASIMD, "ASIMD")
		require.Equal(t, cpu.ARM64.HasASIMDHP, f.ASIMDHP, "ASIMDHP")
		require.Equal(t, cpu.ARM64.HasASIMDDP, f.ASIMDDP, "ASIMDDP")
		require.Equal(t, cpu.ARM64.HasSVE, f.SVE, "SVE")
		require.False(t, f.AVX2)
	default:
		t.Skipf("no cross-check on %s", runtime.GOARCH)
	}
}

func TestNICOf(t *testing.T) {
	_, v4, err := net.ParseCIDR("10.1.2.3/16")
	require.NoError(t, err)
	v4.IP = net.IPv4(10, 1, 2, 3)
	_, v6, err := net.ParseCIDR("fe80::1/64")
	require.NoError(t, err)
	nic := nicOf(net.Interface{Name: "eth0", MTU: 9000, Flags: net.FlagUp | net.FlagRunning},
		[]net.Addr{v4, v6, &net.IPAddr{IP: net.IPv4(1, 2, 3, 4)}})
	require.Equal(t, NIC{Name: "eth0", MTU: 9000, Addrs: []string{"10.1.2.3/16", "fe80::/64"}, Up: true, Running: true}, nic)
	require.NoError(t, nic.validate())
}

// The machine's name is a function of the kernel's boot id alone: the
// same boot id gives the same name (as the network namespaces of a lab,
// or containers of one kernel, whatever their /etc/machine-id, share it),
// another boot another name, and no file none.
func TestMachineID(t *testing.T) {
	dir := t.TempDir()
	boot := dir + "/boot_id"
	require.NoError(t, os.WriteFile(boot, []byte("4c1d2e3f-aaaa-bbbb-cccc-000000000001\n"), 0o644))
	old := bootIDFile
	t.Cleanup(func() { bootIDFile = old })
	bootIDFile = boot
	first := machineID()
	require.Len(t, first, 16)
	require.Equal(t, first, machineID())
	require.NoError(t, os.WriteFile(boot, []byte("4c1d2e3f-aaaa-bbbb-cccc-000000000002\n"), 0o644))
	require.NotEqual(t, first, machineID())
	bootIDFile = dir + "/none"
	require.Empty(t, machineID())

	bootIDFile = old
	info, err := DetectLocal("", "")
	require.NoError(t, err)
	require.Equal(t, machineID(), info.CPU.Machine)
}

// The cores are the process's affinity mask when DetectLocal runs, not
// when the process started (runtime.NumCPU): a rank that binds itself as
// it joins (a remote rank of gocoll run --bind-to core) reports the CPUs
// it is bound to, as one bound at fork does.
func TestDetectCoresAfterBinding(t *testing.T) {
	var all []int
	for _, c := range affinity.Cores() {
		all = append(all, c...)
	}
	if len(all) < 2 {
		t.Skip("the process may run on fewer than 2 CPUs (or the mask cannot be read)")
	}
	slices.Sort(all)
	info, err := DetectLocal("", "")
	require.NoError(t, err)
	limit := detectCPULimit() // a cgroup's CPU limit caps the cores (TestLimitCores)
	cpus, cores := limitCores(affinity.Format(all), len(all), limit)
	require.Equal(t, cores, info.CPU.Cores)
	require.Equal(t, cpus, info.CPU.CPUs)
	require.NoError(t, info.CPU.validate())

	require.NoError(t, affinity.Bind(all[:1]))
	defer func() { require.NoError(t, affinity.Bind(all)) }()
	info, err = DetectLocal("", "")
	require.NoError(t, err)
	require.Equal(t, 1, info.CPU.Cores, "bound to CPU %d after start-up", all[0])
	cpus, _ = limitCores(affinity.Format(all[:1]), 1, limit)
	require.Equal(t, cpus, info.CPU.CPUs)
}
