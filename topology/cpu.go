package topology

// CPUInfo describes the processor a rank runs on, as far as a reduction
// kernel or the tuner needs it. Counts and sizes are 0 when unknown.
type CPUInfo struct {
	Arch           string      `json:"arch,omitempty"`   // GOARCH of the process, e.g. "amd64", "arm64"
	Vendor         string      `json:"vendor,omitempty"` // vendor id, e.g. "Intel", "AMD", "ARM"
	Brand          string      `json:"brand,omitempty"`  // marketing name of the model
	PhysicalCores  int         `json:"physical_cores,omitempty"`
	LogicalCores   int         `json:"logical_cores,omitempty"` // hardware threads
	ThreadsPerCore int         `json:"threads_per_core,omitempty"`
	CacheLineBytes int         `json:"cache_line_bytes,omitempty"`
	L1DBytes       int         `json:"l1d_bytes,omitempty"` // level 1 data cache
	L2Bytes        int         `json:"l2_bytes,omitempty"`
	L3Bytes        int         `json:"l3_bytes,omitempty"`
	Features       CPUFeatures `json:"features,omitzero"`
	// Machine names the physical machine (the running kernel) of the
	// rank: ranks with the same Machine share its cores, whatever their
	// Host says (the "hosts" of a network-namespace lab are one machine,
	// real hosts are not). Empty: unknown, and the rank's Host stands for
	// its machine. DetectLocal derives it from the kernel's boot id alone
	// (containers of one kernel share its cores, whatever their
	// /etc/machine-id), never from the network.
	Machine string `json:"machine,omitempty"`
	// Cores is how many CPUs (hardware threads) the machine lets the
	// rank's process run on: the size of its scheduler affinity mask as
	// DetectLocal reads it, after the rank's own binding (gocoll run
	// --bind-to core), or, where the process's cgroups limit its CPU time
	// to fewer (cgroup v2 cpu.max, v1 cpu.cfs_quota_us over its period,
	// rounded up), that many, and then CPUs is empty; 0: unknown.
	Cores int `json:"cores,omitempty"`
	// CPUs lists those CPUs (the kernel's cpu list form, "0-3,8"; its
	// size is Cores), "" unknown. The cost model (collective/tune) takes
	// a machine's cores as the size of the union of its ranks' CPUs, so
	// ranks bound a core each count as many cores as ranks, and unbound
	// ones as all the cores they may use; a rank without CPUs counts its
	// Cores.
	CPUs string `json:"cpus,omitempty"`
}

// CPUFeatures lists the instruction set extensions a SIMD reduction kernel
// chooses by. A flag is true only if both the CPU and the operating system
// support the extension (for AVX state, the OS must save the registers).
type CPUFeatures struct {
	// x86-64
	SSE2       bool `json:"sse2,omitempty"`
	SSE41      bool `json:"sse41,omitempty"`
	SSE42      bool `json:"sse42,omitempty"`
	AVX        bool `json:"avx,omitempty"`
	AVX2       bool `json:"avx2,omitempty"`
	FMA3       bool `json:"fma3,omitempty"`
	F16C       bool `json:"f16c,omitempty"` // float16 <-> float32 conversion
	AVX512F    bool `json:"avx512f,omitempty"`
	AVX512BW   bool `json:"avx512bw,omitempty"`
	AVX512VL   bool `json:"avx512vl,omitempty"`
	AVX512BF16 bool `json:"avx512bf16,omitempty"` // bfloat16 dot products and conversion
	AVX512FP16 bool `json:"avx512fp16,omitempty"` // float16 arithmetic
	AVXVNNI    bool `json:"avxvnni,omitempty"`
	// arm64
	ASIMD   bool `json:"asimd,omitempty"`   // NEON
	ASIMDHP bool `json:"asimdhp,omitempty"` // NEON float16 arithmetic
	ASIMDDP bool `json:"asimddp,omitempty"` // NEON int8 dot product
	BF16    bool `json:"bf16,omitempty"`    // bfloat16 instructions
	SVE     bool `json:"sve,omitempty"`
	SVE2    bool `json:"sve2,omitempty"`
}
