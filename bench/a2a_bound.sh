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
# rank's mean per call, in microseconds, the median of ROUNDS rounds.
#
# Variants, interleaved round by round (VARIANTS, default all):
#   own-last   the own block copied after the peers' blocks (gocoll's order)
#   own-first  the own block copied before them (OpenMPI's order)
#   own-none   no own-block copy: the cross-memory copies alone
#   own-nt     own-last with non-temporal stores (as Go's memmove above
#              1 MiB; glibc's memcpy uses them only above a threshold that
#              scales with the cache size)
#
#   SIZE=67108864 ITERS=10 ROUNDS=5 NICE=-20 bash bench/a2a_bound.sh
#
# NICE (default 0) as in shm_ab.sh: each run in a session of its own whose
# autogroup has that niceness. Needs a C compiler (cc) and AVX-512F for
# own-nt (skipped without it). Not run by the tests.
set -euo pipefail
SIZE=${SIZE:-67108864} ITERS=${ITERS:-10} ROUNDS=${ROUNDS:-5} NP=${NP:-4} CHUNK=${CHUNK:-1048576} NICE=${NICE:-0}
VARIANTS=${VARIANTS:-own-last own-first own-none own-nt}
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

static void ntcopy(char *d, const char *s, size_t n) {
#ifdef __AVX512F__
  for (size_t i = 0; i < n; i += 64) _mm512_stream_si512((void *)(d + i), _mm512_loadu_si512(s + i));
  _mm_sfence();
#else
  memcpy(d, s, n);
#endif
}

struct shared { atomic_long count, gen; pid_t pid[64]; char *send[64]; double t[64]; };

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
  if (np < 2 || np > 64 || size % np || chunk == 0) { fprintf(stderr, "a2a: bad arguments\n"); return 2; }
  int first = !strcmp(mode, "own-first"), none = !strcmp(mode, "own-none"), nt = !strcmp(mode, "own-nt");
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
      if (first) memcpy(own, src, b);
      for (int k = 1; k < np; k++) {
        int f = (r - k + np) % np;
        for (size_t o = 0; o < b; o += chunk) {
          size_t n = b - o < chunk ? b - o : chunk;
          struct iovec l = {rcv + f * b + o, n}, rm = {s->send[f] + r * b + o, n};
          if (process_vm_readv(s->pid[f], &l, 1, &rm, 1, 0) != (ssize_t)n) { perror("process_vm_readv"); exit(1); }
        }
      }
      if (nt) ntcopy(own, src, b);
      else if (!first && !none) memcpy(own, src, b);
      barrier(s, np);
    }
    s->t[r] = (now() - t0) / iters;
    exit(0);
  }
  int failed = 0, st;
  while (wait(&st) > 0) failed |= !WIFEXITED(st) || WEXITSTATUS(st);
  if (failed) return 1;
  double m = 0;
  for (int r = 0; r < np; r++) if (s->t[r] > m) m = s->t[r];
  printf("%.1f\n", m * 1e6);
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
echo "# a2a_bound: size $SIZE, $NP processes, chunk $CHUNK, $ITERS calls a run, $ROUNDS rounds"
rows=$dir/rows
for round in $(seq "$ROUNDS"); do
  echo "# round $round: load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%T)"
  for v in $VARIANTS; do
    if [[ $v == own-nt && ${#march[@]} == 0 ]]; then continue; fi
    echo "$v $(niced "$dir/a2a" "$SIZE" "$ITERS" "$CHUNK" "$NP" "$v")" >>"$rows"
  done
done
echo "# variant median_us rounds..."
awk '{ v[$1] = v[$1] " " $2 }
  END {
    for (k in v) {
      n = split(substr(v[k], 2), x, " ")
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] + 0 < x[i] + 0) { t = x[i]; x[i] = x[j]; x[j] = t }
      printf "%-10s %10.1f  %s\n", k, n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2, v[k]
    }
  }' "$rows" | sort