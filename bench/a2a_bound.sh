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
# own-nt and own-vec (skipped without it). Not run by the tests.
set -euo pipefail
SIZE=${SIZE:-67108864} ITERS=${ITERS:-10} ROUNDS=${ROUNDS:-5} NP=${NP:-4} CHUNK=${CHUNK:-1048576} NICE=${NICE:-0}
VARIANTS=${VARIANTS:-own-last own-first own-none own-nt own-vec} GOCOLL=${GOCOLL:-}
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
struct shared { atomic_long count, gen; pid_t pid[64]; char *send[64]; double t[64], cross[64], own[64]; };

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
  int vec = !strcmp(mode, "own-vec");
  struct shared *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  size_t b = size / np;
  for (int r = 0; r < np; r++) {
    if (fork()) continue;
    char *snd = buf(size), *rcv = buf(size);
    s->pid[r] = getpid();
    s->send[r] = snd;
    barrier(s, np);
    double t0 = 0;
    for (int it = 0; it < iters + 2; it++) {
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
          struct iovec l = {rcv + f * b + o, n}, rm = {s->send[f] + r * b + o, n};
          if (process_vm_readv(s->pid[f], &l, 1, &rm, 1, 0) != (ssize_t)n) { perror("process_vm_readv"); exit(1); }
        }
      }
      double c2 = cpu();
      if (nt) ntcopy(own, src, b);
      else if (vec) vcopy(own, src, b);
      else if (!first && !none) memcpy(own, src, b);
      double c3 = cpu();
      if (it >= 2) s->cross[r] += c2 - c1, s->own[r] += (c1 - c0) + (c3 - c2);
      barrier(s, np);
    }
    s->t[r] = (now() - t0) / iters;
    exit(0);
  }
  int failed = 0, st;
  while (wait(&st) > 0) failed |= !WIFEXITED(st) || WEXITSTATUS(st);
  if (failed) return 1;
  double m = 0, cross = 0, own = 0;
  for (int r = 0; r < np; r++) {
    if (s->t[r] > m) m = s->t[r];
    cross += s->cross[r], own += s->own[r];
  }
  printf("%.1f %.1f %.1f\n", m * 1e6, cross / iters * 1e6, own / iters * 1e6);
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
    if [[ ($v == own-nt || $v == own-vec) && ${#march[@]} == 0 ]]; then continue; fi
    echo "$v $(niced "$dir/a2a" "$SIZE" "$ITERS" "$CHUNK" "$NP" "$v")" >>"$rows"
  done
  if [[ -n $GOCOLL ]]; then
    t=$(niced "$GOCOLL" bench alltoall -np "$NP" --sizes "$SIZE" -w 2 -n "$ITERS" -c 0 --format peers 2>&1 | awk '$1 == "alltoall" { print $4 }')
    echo "gocoll ${t:-failed} - -" >>"$rows"
  fi
done
echo "# variant median_us cross_cpu_us own_cpu_us (medians; CPU summed over ranks, a call) | wall rounds..."
awk '
  function med(s, x, n, i, j, t) {
    n = split(substr(s, 2), x, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] + 0 < x[i] + 0) { t = x[i]; x[i] = x[j]; x[j] = t }
    return n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
  }
  { v[$1] = v[$1] " " $2; c[$1] = c[$1] " " $3; o[$1] = o[$1] " " $4 }
  END {
    for (k in v) {
      cpu = c[k] ~ /-/ ? sprintf("%10s %10s", "-", "-") : sprintf("%10.1f %10.1f", med(c[k]), med(o[k]))
      printf "%-10s %10.1f %s |%s\n", k, med(v[k]), cpu, v[k]
    }
  }' "$rows" | sort