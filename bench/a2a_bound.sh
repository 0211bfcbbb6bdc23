#!/usr/bin/env bash
# a2a_bound.sh: what the copies of a large AllToAll cost on this host by
# themselves, as a floor for gocoll's and OpenMPI's shared-memory AllToAll
# (bench/shm_ab.sh). NP processes (default 4), each with a send and a
# receive buffer of SIZE bytes on transparent huge pages, run ITERS calls
# (after 2 warm-ups) of exactly the copies both runtimes make: rank r reads
# block r of each peer's send buffer into its receive buffer with
# process_vm_readv (cross-memory attach, CHUNK bytes a system call; peers in
# the order r-1, r-2, ..., as gocoll's pairwise), and copies its own block
# locally; a shared-memory barrier (spinning with sched_yield, as both
# runtimes' waits do on an oversubscribed host) ends each call. Nothing
# else: no headers, no protocol, no balancer. The time is the slowest
# rank's mean per call, in microseconds, the median of ROUNDS rounds. It
# is a floor for the copies, not for a loop of calls: the barrier keeps
# every rank from starting call i+1 before all have ended call i, which
# gocoll's ranks do not wait for (with GOCOLL set below, gocoll read 0.68
# and 1.29 ms at 4 and 8 MiB against 0.78-0.99 and 1.48-1.77 for the
# variants, load 7-10, bench/results/shm_large.md, session 22).
#
# Beside it, the CPU time of the copies themselves, summed over the ranks,
# in microseconds a call (each rank's thread CPU clock around its
# cross-memory copies and around its own-block copy): with 4 ranks on 2
# cores a wall figure moves by tens of percent with the scheduling and
# the other load, while the copies' CPU time moves by a few, so it is the
# one to compare variants by (how much a way of copying costs, and what
# it does to the cost of the other copies).
#
# Variants, interleaved round by round (VARIANTS, default all):
#   own-last   the own block copied after the peers' blocks (gocoll's order)
#   own-first  the own block copied before them (OpenMPI's order)
#   own-none   no own-block copy: the cross-memory copies alone
#   own-nt     own-last with non-temporal stores (as Go's memmove above
#              1 MiB; glibc's memcpy uses them only above a threshold that
#              scales with the cache size)
#   own-vec    own-last with 64-byte vector loads and cached stores (as
#              Go's memmove below 1 MiB, so as a Go copy in pieces under
#              1 MiB would)
#   steal      own-nt, and then, instead of waiting at the barrier, a rank
#              writes its own blocks' CHUNK pieces that their receivers
#              have not yet taken into their receive buffers with
#              process_vm_writev, from the last piece back (a receiver
#              takes pieces from the first on; each piece is claimed once
#              a call with a compare-and-swap in shared memory): what a
#              sender that copies for a busy receiver would gain. Printed
#              with the pieces a call written so ("stolen"); its own-block
#              CPU includes those writes.
#
# Every run checks, after its timed calls, one more call into a cleared
# receive buffer: each block must hold what its sender's buffer holds (a
# byte pattern of sender and offset; own-none's own block is left out).
#
# GOCOLL (default empty), a gocoll binary: each round also runs `$GOCOLL
# bench alltoall` over the same size, ranks and calls (2 warm-ups,
# --format peers, the slowest rank's mean per call, as shm_ab.sh reads
# it), at the same niceness, printed as variant "gocoll" (no CPU
# columns), so that gocoll and its floor are measured in one sitting.
#
#   SIZE=67108864 ITERS=10 ROUNDS=5 NICE=-20 bash bench/a2a_bound.sh
#   SIZE=16777216 ITERS=10 ROUNDS=7 NICE=-20 GOCOLL=./gocoll bash bench/a2a_bound.sh
#
# NICE (default 0) as in shm_ab.sh: each run in a session of its own whose
# autogroup has that niceness. Needs a C compiler (cc) and AVX-512F for
# own-nt, own-vec and steal (skipped without it). Not run by the tests.
set -euo pipefail
SIZE=${SIZE:-67108864} ITERS=${ITERS:-10} ROUNDS=${ROUNDS:-5} NP=${NP:-4} CHUNK=${CHUNK:-1048576} NICE=${NICE:-0}
VARIANTS=${VARIANTS:-own-last own-first own-none own-nt own-vec steal} GOCOLL=${GOCOLL:-}
dir=$(mktemp -d /tmp/a2abound.XXXXXX)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/a2a.c" <<'EOF'
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __AVX512F__
#include <immintrin.h>
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* pattern: the byte at offset i of rank r's send buffer (a hash, so that
   a block read from the wrong rank or offset differs). */
static char pattern(int r, size_t i) {
  return (char)(((unsigned long long)i * 0x9E3779B97F4A7C15ull + (unsigned long long)r * 0xD1B54A32D192ED03ull) >> 56);
}

/* buf: n bytes on 2 MiB-aligned transparent huge pages, touched. */
static char *buf(size_t n) {
  size_t a = 2u << 20, len = (n + a - 1) / a * a;
  char *p = mmap(NULL, len + a, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) { perror("mmap"); exit(1); }
  char *q = (char *)(((unsigned long)p + a - 1) & ~(unsigned long)(a - 1));
  madvise(q, len, MADV_HUGEPAGE);
  memset(q, 1, len);
  return q;
}

/* cpu: this thread's CPU time in seconds. */
static double cpu(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* vcopy: 64-byte vector loads and cached stores (n a multiple of 256). */
static void vcopy(char *d, const char *s, size_t n) {
#ifdef __AVX512F__
  for (size_t i = 0; i < n; i += 256) {
    __m512i a = _mm512_loadu_si512(s + i), b = _mm512_loadu_si512(s + i + 64);
    __m512i c = _mm512_loadu_si512(s + i + 128), e = _mm512_loadu_si512(s + i + 192);
    _mm512_storeu_si512(d + i, a), _mm512_storeu_si512(d + i + 64, b);
    _mm512_storeu_si512(d + i + 128, c), _mm512_storeu_si512(d + i + 192, e);
  }
#else
  memcpy(d, s, n);
#endif
}

static void ntcopy(char *d, const char *s, size_t n) {
#ifdef __AVX512F__
  for (size_t i = 0; i < n; i += 64) _mm512_stream_si512((void *)(d + i), _mm512_loadu_si512(s + i));
  _mm_sfence();
#else
  memcpy(d, s, n);
#endif
}

/* t: each rank's wall seconds a call; cross, own: its CPU seconds in its
   cross-memory copies and in its own-block copy over the timed calls. */
struct shared {
  atomic_long count, gen;
  pid_t pid[64];
  char *send[64], *recv[64];
  double t[64], cross[64], own[64];
  long stolen[64]; /* steal: pieces this rank wrote for its receivers */
};

static void barrier(struct shared *s, int np) {
  long g = atomic_load(&s->gen);
  if (atomic_fetch_add(&s->count, 1) == np - 1) { atomic_store(&s->count, 0); atomic_fetch_add(&s->gen, 1); }
  else while (atomic_load(&s->gen) == g) sched_yield();
}

int main(int argc, char **argv) {
  if (argc != 6) { fprintf(stderr, "usage: a2a SIZE ITERS CHUNK NP MODE\n"); return 2; }
  size_t size = strtoul(argv[1], 0, 0), chunk = strtoul(argv[3], 0, 0);
  int iters = atoi(argv[2]), np = atoi(argv[4]);
  const char *mode = argv[5];
  if (np < 2 || np > 64 || size % (256 * np) || chunk == 0) { fprintf(stderr, "a2a: bad arguments\n"); return 2; }
  int first = !strcmp(mode, "own-first"), none = !strcmp(mode, "own-none"), nt = !strcmp(mode, "own-nt");
  int vec = !strcmp(mode, "own-vec"), steal = !strcmp(mode, "steal");
  nt |= steal;
  struct shared *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  size_t b = size / np, pieces = (b + chunk - 1) / chunk;
  /* claim[(to*np+from)*pieces+c]: the call (from 1) that took piece c of
     from's block for to (steal). */
  atomic_long *claim = mmap(NULL, np * np * pieces * sizeof *claim, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (claim == MAP_FAILED) { perror("mmap"); return 1; }
  for (int r = 0; r < np; r++) {
    if (fork()) continue;
    char *snd = buf(size), *rcv = buf(size);
    for (size_t i = 0; i < size; i++) snd[i] = pattern(r, i);
    s->pid[r] = getpid();
    s->send[r] = snd, s->recv[r] = rcv;
    barrier(s, np);
    double t0 = 0;
    /* 2 warm-ups, iters timed calls, and one more into a cleared receive
       buffer, which is then checked. */
    for (int it = 0; it < iters + 3; it++) {
      int timed = it >= 2 && it < iters + 2;
      if (it == iters + 2) {
        s->t[r] = (now() - t0) / iters;
        memset(rcv, 0, size);
      }
      barrier(s, np);
      if (it == 2) t0 = now();
      char *own = rcv + r * b, *src = snd + r * b;
      double c0 = cpu();
      if (first) memcpy(own, src, b);
      double c1 = cpu();
      for (int k = 1; k < np; k++) {
        int f = (r - k + np) % np;
        for (size_t o = 0; o < b; o += chunk) {
          size_t n = b - o < chunk ? b - o : chunk;
          long want = it;
          if (steal && !atomic_compare_exchange_strong(&claim[(r * np + f) * pieces + o / chunk], &want, it + 1)) continue;
          struct iovec l = {rcv + f * b + o, n}, rm = {s->send[f] + r * b + o, n};
          if (process_vm_readv(s->pid[f], &l, 1, &rm, 1, 0) != (ssize_t)n) { perror("process_vm_readv"); exit(1); }
        }
      }
      double c2 = cpu();
      if (nt) ntcopy(own, src, b);
      else if (vec) vcopy(own, src, b);
      else if (!first && !none) memcpy(own, src, b);
      for (int k = 1; steal && k < np; k++) {
        int to = (r + k) % np;
        for (size_t c = pieces; c-- > 0;) {
          size_t o = c * chunk, n = b - o < chunk ? b - o : chunk;
          long want = it;
          if (!atomic_compare_exchange_strong(&claim[(to * np + r) * pieces + c], &want, it + 1)) continue;
          struct iovec l = {snd + to * b + o, n}, rm = {s->recv[to] + r * b + o, n};
          if (process_vm_writev(s->pid[to], &l, 1, &rm, 1, 0) != (ssize_t)n) { perror("process_vm_writev"); exit(1); }
          if (timed) s->stolen[r]++;
        }
      }
      double c3 = cpu();
      if (timed) s->cross[r] += c2 - c1, s->own[r] += (c1 - c0) + (c3 - c2);
      barrier(s, np);
    }
    for (int f = 0; f < np; f++)
      for (size_t j = 0; j < b && !(none && f == r); j++)
        if (rcv[f * b + j] != pattern(f, r * b + j)) { fprintf(stderr, "a2a %s: rank %d: wrong byte %zu from rank %d\n", mode, r, j, f); exit(1); }
    exit(0);
  }
  int failed = 0, st;
  while (wait(&st) > 0) failed |= !WIFEXITED(st) || WEXITSTATUS(st);
  if (failed) return 1;
  double m = 0, cross = 0, own = 0, stolen = 0;
  for (int r = 0; r < np; r++) {
    if (s->t[r] > m) m = s->t[r];
    cross += s->cross[r], own += s->own[r], stolen += s->stolen[r];
  }
  printf("%.1f %.1f %.1f %.2f\n", m * 1e6, cross / iters * 1e6, own / iters * 1e6, stolen / iters);
  return 0;
}
EOF
march=()
grep -qw avx512f /proc/cpuinfo && march=(-mavx512f)
cc -O2 "${march[@]}" -o "$dir/a2a" "$dir/a2a.c"
niced() {
  if [[ $NICE != 0 && $(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null) == 1 ]]; then
    setsid -w bash -c 'n=$1; shift; echo "$n" >/proc/$$/autogroup && exec nice -n "$n" "$@"' niced "$NICE" "$@"
  else
    nice -n "$NICE" "$@"
  fi
}
echo "# a2a_bound: size $SIZE, $NP processes, chunk $CHUNK, $ITERS calls a run, $ROUNDS rounds${GOCOLL:+, gocoll $GOCOLL}"
rows=$dir/rows
for round in $(seq "$ROUNDS"); do
  echo "# round $round: load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%T)"
  for v in $VARIANTS; do
    if [[ ($v == own-nt || $v == own-vec || $v == steal) && ${#march[@]} == 0 ]]; then continue; fi
    echo "$v $(niced "$dir/a2a" "$SIZE" "$ITERS" "$CHUNK" "$NP" "$v" || echo failed)" >>"$rows"
  done
  if [[ -n $GOCOLL ]]; then
    t=$(niced "$GOCOLL" bench alltoall -np "$NP" --sizes "$SIZE" -w 2 -n "$ITERS" -c 0 --format peers 2>&1 | awk '$1 == "alltoall" { print $4 }')
    echo "gocoll ${t:-failed} - - -" >>"$rows"
  fi
done
echo "# variant median_us cross_cpu_us own_cpu_us stolen (medians; CPU summed over ranks, a call; steal's pieces a call) | wall rounds..."
awk '
  function med(s, x, n, i, j, t) {
    n = split(substr(s, 2), x, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] + 0 < x[i] + 0) { t = x[i]; x[i] = x[j]; x[j] = t }
    return n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
  }
  { v[$1] = v[$1] " " $2; c[$1] = c[$1] " " $3; o[$1] = o[$1] " " $4; st[$1] = st[$1] " " $5 }
  END {
    for (k in v) {
      cpu = c[k] ~ /-/ ? sprintf("%10s %10s %7s", "-", "-", "-") : sprintf("%10.1f %10.1f %7.2f", med(c[k]), med(o[k]), med(st[k]))
      printf "%-10s %10.1f %s |%s\n", k, med(v[k]), cpu, v[k]
    }
  }' "$rows" | sort