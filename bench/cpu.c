/* bench/cpu.c — the CPU backend of accel next to raw baselines, measured in the same run.

   Build and run (Linux):
       gcc -std=c11 -O2 -fopenmp -I. bench/cpu.c -o build/bench_cpu -lpthread -lm
       ./build/bench_cpu            # full run, well under a minute
       ./build/bench_cpu --quick    # a few seconds: CI smoke check (smaller sizes, fewer rounds)

   Figures (accel | raw baseline):
     1. signal ping-pong between two host threads (pinned to two CPUs): accel_signal_set/wait round
        trip | a raw spin-then-futex word (spinning as long as accel does) | C11 mtx/cnd
     2. submit-to-complete latency of a one-group exec | an empty OpenMP `parallel for` fork-join
    2t. the same on a device writing a trace (accel_device_desc.trace_path) | the same untraced
    2u. a small dispatch (SAXPY over 16K floats, 64 groups) traced | the same untraced
     3. 10,000 one-group execs in one batch, cost per command | a direct function-call loop
     4. SAXPY over 64 MiB arrays, GB/s (12 bytes/element) | OpenMP `parallel for` | memcpy (2 x bytes)
     5. a compute-bound kernel: speed-up from cpu_threads=1 to all cores | the same with OpenMP
     6. CPU time of an idle device over one second, % of one core | the same process with no device
     7. cost of one exec of 4096 near-empty groups at 2, 4, 8 lanes | an OpenMP `parallel for` of the
        same shape with as many threads; 7o: the overhead beyond the kernels (target <= 1.5 us at the
        lane counts the machine has) | an empty OpenMP region
     8. a 64-command list of one-group execs, per command: replayed (accel_queue_replay) | recorded
        anew (exec x 64); submit to complete included. 8b: the same with one constant patched per
        replay (a step counter). Target: replay at most 0.5x (>= 2x less per command).
     9. task systems, each side with its own idiom (oneTBB where built in, OpenMP): a chain of dependent
        tiny tasks, per task; a fork-join over 4096 items; the host submits one tiny task and waits
        (mean and median). Targets: ahead of both on the chain and the fork-join; the round trip's
        mean <= 1.5x oneTBB's task_group run + wait and <= 0.5x OpenMP's fork-join.
    10. an indirect exec (accel_queue_exec_indirect: group counts read from a buffer when it runs),
        submit to complete, one group (10) and a SAXPY over 16K floats in 64 groups (10b) | the same
        exec with its size given (accel_queue_exec). Paired rounds; target <= 1.05x.
    11. queue-ordered memory: a step (fill a 1 MiB scratch buffer, a one-group exec that reads two words
        of it into a result word, signal, submit, wait) whose scratch comes from accel_queue_alloc and
        goes back with accel_queue_free | the same step with a scratch made once (paired rounds,
        bench_pair_run). Target <= 1.10x. For information: 11c the same with the fill replaced by two
        words written by the exec (the alloc/free pair against a step of almost nothing: extra_ns is
        its cost); 11b the 1 MiB step with accel_buffer_create / accel_buffer_destroy per step (what a
        program without queue memory does).

   Method: this is meant for a shared, noisy 2-core machine. The two sides of a figure run interleaved
   (A B A B ...) for several rounds after a warm-up, and each side reports its median. Between blocks
   that use different thread pools the bench sleeps briefly (BENCH_SETTLE_NS) so that neither pool's
   idle spinning (accel: ACCEL_CPU_SPIN_NS; libgomp: GOMP_SPINCOUNT, milliseconds) steals a core from
   the other side. OpenMP runs with as many threads as the accel device has lanes. Every figure checks
   its results (counters, SAXPY output, kernel output), and the bench exits non-zero when one is wrong.
   The idle figure is measured first, before OpenMP has started any thread. */
#define _GNU_SOURCE 1
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "bench/bench.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <threads.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>

#ifndef _OPENMP
#  error "bench/cpu.c needs OpenMP for its baselines: build with -fopenmp"
#endif
#include <omp.h>

#ifdef ACCEL_CPU_SPIN_NS
#  define BENCH_SPIN_NS ((uint64_t)(ACCEL_CPU_SPIN_NS))
#else
#  define BENCH_SPIN_NS ((uint64_t)200000)
#endif
#define BENCH_SETTLE_NS  ((uint64_t)30000000)      /* 30 ms between blocks of different thread pools */
#define BENCH_WAIT_NS    ((uint64_t)20000000000ull) /* 20 s: a wait that takes longer is a failure */

/* ==== configuration ==== */
typedef struct bench_config {
    bool quick;
    uint32_t threads;          /* device lanes = OpenMP threads = usable cores */
    int rounds;                /* interleaved rounds per figure */
    uint32_t pingpong_iters;   /* round trips per run */
    uint32_t latency_iters;    /* timed execs per block */
    uint32_t batch_cmds;       /* execs per batch */
    size_t saxpy_n;            /* floats per array */
    uint32_t compute_n, compute_iters;
    uint64_t idle_ns;          /* idle measurement length */
    const char* only;          /* --only NAME[,NAME]: run just those figures (pingpong, latency, trace, batch, saxpy, compute, idle, overhead, replay, tasks, indirect, qmem) */
} bench_config;
static bench_config cfg;

static void check(accel_result r, const char* what) {
    if (r != ACCEL_OK) {
        fprintf(stderr, "bench: %s failed: %s\n", what, accel_result_string(r));
        exit(2);
    }
}

/* ==== kernels (the same C functions run by accel and by the baselines) ==== */
/* one-group kernel: bumps a counter, so the bench can check every exec ran exactly once */
static void k_count(const accel_dispatch* d) {
    uint32_t* c = (uint32_t*)d->buffers[0];
    c[0] += 1;
}
/* k_count, and records the CPU it ran on (to tell when the executor shares the host thread's CPU) */
static void k_count_cpu(const accel_dispatch* d) {
    uint32_t* c = (uint32_t*)d->buffers[0];
    c[0] += 1;
    c[1] = (uint32_t)sched_getcpu();
}
/* marks its group's slot */
static void k_mark(const accel_dispatch* d) {
    uint32_t* c = (uint32_t*)d->buffers[0];
    c[d->group_id[0]] = d->group_id[0] + 1;
}

static void saxpy_range(float* restrict y, const float* restrict x, float a, size_t i0, size_t i1) {
#pragma omp simd
    for (size_t i = i0; i < i1; i++) y[i] += a * x[i];
}
static void k_saxpy(const accel_dispatch* d) {
    float* y = (float*)d->buffers[0];
    const float* x = (const float*)d->buffers[1];
    float a;
    memcpy(&a, &d->constants[0], sizeof a);
    size_t i0 = (size_t)d->group_id[0] * d->group_size[0];
    size_t i1 = i0 + d->group_size[0];
    if (i1 > d->global_size[0]) i1 = d->global_size[0];
    saxpy_range(y, x, a, i0, i1);
}

/* compute-bound: `iters` dependent multiply-adds per element (vectorised across elements) */
static void compute_range(float* restrict y, const float* restrict x, uint32_t iters, size_t i0, size_t i1) {
#pragma omp simd
    for (size_t i = i0; i < i1; i++) {
        float v = x[i];
        for (uint32_t k = 0; k < iters; k++) v = v * 0.9990f + 0.0010f;
        y[i] = v;
    }
}
static void k_compute(const accel_dispatch* d) {
    size_t i0 = (size_t)d->group_id[0] * d->group_size[0];
    size_t i1 = i0 + d->group_size[0];
    if (i1 > d->global_size[0]) i1 = d->global_size[0];
    compute_range((float*)d->buffers[0], (const float*)d->buffers[1], d->constants[0], i0, i1);
}

/* ==== figure 1: signal ping-pong between two host threads ==== */
/* the three "signals" under test, behind the same two calls */
typedef struct pp_ops {
    void (*set)(void* obj, uint64_t v);
    void (*wait)(void* obj, uint64_t v);
} pp_ops;

static void pp_accel_set(void* obj, uint64_t v) { check(accel_signal_set((accel_signal*)obj, v), "accel_signal_set"); }
static void pp_accel_wait(void* obj, uint64_t v) { check(accel_signal_wait((accel_signal*)obj, v, BENCH_WAIT_NS), "accel_signal_wait"); }
static const pp_ops pp_accel = { pp_accel_set, pp_accel_wait };

/* raw spin-then-futex: an atomic word; a waiter spins BENCH_SPIN_NS (what accel spins), then sleeps in
   FUTEX_WAIT; a setter issues FUTEX_WAKE only when someone sleeps. */
typedef struct raw_futex {
    _Atomic uint32_t value;
    _Atomic uint32_t sleepers;
} raw_futex;
static void raw_futex_set(void* obj, uint64_t v) {
    raw_futex* f = (raw_futex*)obj;
    atomic_store(&f->value, (uint32_t)v);                 /* seq_cst: ordered before the sleepers load */
    if (atomic_load(&f->sleepers) != 0)
        syscall(SYS_futex, &f->value, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
static void raw_futex_wait(void* obj, uint64_t v64) {
    raw_futex* f = (raw_futex*)obj;
    uint32_t v = (uint32_t)v64;
    if (atomic_load_explicit(&f->value, memory_order_acquire) >= v) return;
    uint64_t deadline = bench_now_ns() + BENCH_SPIN_NS;
    for (uint32_t k = 1;; k++) {
        if (atomic_load_explicit(&f->value, memory_order_acquire) >= v) return;
        if ((k & 15) == 0 && bench_now_ns() >= deadline) break;
        bench_cpu_relax();
    }
    for (;;) {
        atomic_fetch_add(&f->sleepers, 1);
        uint32_t cur = atomic_load(&f->value);
        if (cur >= v) { atomic_fetch_sub(&f->sleepers, 1); return; }
        syscall(SYS_futex, &f->value, FUTEX_WAIT_PRIVATE, cur, NULL, NULL, 0);
        atomic_fetch_sub(&f->sleepers, 1);
    }
}
static const pp_ops pp_futex = { raw_futex_set, raw_futex_wait };

/* C11 mutex + condition variable */
typedef struct raw_cnd {
    mtx_t m;
    cnd_t c;
    uint64_t value;
} raw_cnd;
static void raw_cnd_set(void* obj, uint64_t v) {
    raw_cnd* r = (raw_cnd*)obj;
    mtx_lock(&r->m);
    if (v > r->value) r->value = v;
    cnd_signal(&r->c);
    mtx_unlock(&r->m);
}
static void raw_cnd_wait(void* obj, uint64_t v) {
    raw_cnd* r = (raw_cnd*)obj;
    mtx_lock(&r->m);
    while (r->value < v) cnd_wait(&r->c, &r->m);
    mtx_unlock(&r->m);
}
static const pp_ops pp_cnd = { raw_cnd_set, raw_cnd_wait };

typedef struct pp_run {
    const pp_ops* ops;
    void *ping, *pong;
    uint32_t total;            /* warm-up + timed round trips */
    int cpu;                   /* the partner's CPU, -1: not pinned */
} pp_run;

/* The two ping-pong threads are pinned to two different CPUs: the figure is the cost of the
   primitive, not of where the scheduler puts the threads. (Unpinned, the kernel often wakes the
   partner onto the waker's CPU; then a spinning waiter holds the CPU its partner needs for the whole
   spin, and accel and the raw futex word both degrade to ~2 spins per round trip.) */
static int pp_cpus[2] = { -1, -1 };
static void pin_self(int cpu) {
    if (cpu < 0) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
}

static int pp_partner(void* arg) {
    pp_run* r = (pp_run*)arg;
    pin_self(r->cpu);
    for (uint32_t i = 1; i <= r->total; i++) {
        r->ops->wait(r->ping, i);
        r->ops->set(r->pong, i);
    }
    return 0;
}

/* runs warmup + iters round trips; returns ns per timed round trip */
static double pp_measure(const pp_ops* ops, void* ping, void* pong, uint32_t warmup, uint32_t iters) {
    pp_run r = { ops, ping, pong, warmup + iters, pp_cpus[1] };
    cpu_set_t saved;
    bool restore = pp_cpus[0] >= 0 && sched_getaffinity(0, sizeof saved, &saved) == 0;
    pin_self(pp_cpus[0]);
    thrd_t t;
    if (thrd_create(&t, pp_partner, &r) != thrd_success) { fprintf(stderr, "bench: thrd_create failed\n"); exit(2); }
    uint64_t t0 = 0;
    for (uint32_t i = 1; i <= r.total; i++) {
        if (i == warmup + 1) t0 = bench_now_ns();
        ops->set(ping, i);
        ops->wait(pong, i);
    }
    uint64_t t1 = bench_now_ns();
    thrd_join(t, NULL);
    if (restore) sched_setaffinity(0, sizeof saved, &saved);
    return (double)(t1 - t0) / (double)iters;
}

static void fig_pingpong(accel_device* dev) {
    int R = cfg.rounds;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) >= 2) {
        int k = 0;
        for (int c = 0; c < CPU_SETSIZE && k < 2; c++) if (CPU_ISSET(c, &set)) pp_cpus[k++] = c;
    }
    double* a = calloc((size_t)R, sizeof(double));
    double* f = calloc((size_t)R, sizeof(double));
    double* c = calloc((size_t)R, sizeof(double));
    uint32_t warmup = cfg.pingpong_iters / 10 + 10;
    for (int round = 0; round < R; round++) {
        /* fresh objects each run, so values restart at 1 */
        accel_signal *s1, *s2;
        check(accel_signal_create(dev, 0, &s1), "accel_signal_create");
        check(accel_signal_create(dev, 0, &s2), "accel_signal_create");
        a[round] = pp_measure(&pp_accel, s1, s2, warmup, cfg.pingpong_iters);
        if (accel_signal_value(s1) != warmup + cfg.pingpong_iters || accel_signal_value(s2) != warmup + cfg.pingpong_iters)
            bench_fail("pingpong: accel signals end at %llu/%llu, expected %u", (unsigned long long)accel_signal_value(s1),
                       (unsigned long long)accel_signal_value(s2), warmup + cfg.pingpong_iters);
        accel_signal_destroy(s1);
        accel_signal_destroy(s2);

        raw_futex f1 = { 0, 0 }, f2 = { 0, 0 };
        f[round] = pp_measure(&pp_futex, &f1, &f2, warmup, cfg.pingpong_iters);

        raw_cnd c1, c2;
        mtx_init(&c1.m, mtx_plain); cnd_init(&c1.c); c1.value = 0;
        mtx_init(&c2.m, mtx_plain); cnd_init(&c2.c); c2.value = 0;
        /* a condition-variable round trip costs tens of microseconds here: a tenth of the iterations */
        c[round] = pp_measure(&pp_cnd, &c1, &c2, warmup / 10 + 1, cfg.pingpong_iters / 10);
        mtx_destroy(&c1.m); cnd_destroy(&c1.c);
        mtx_destroy(&c2.m); cnd_destroy(&c2.c);
    }
    double am = bench_median(a, (size_t)R), fm = bench_median(f, (size_t)R), cm = bench_median(c, (size_t)R);
    bench_row* r = bench_row_add("pingpong", "1 signal ping-pong (round trip)", "ns", am, "futex", fm,
                                 BENCH_TARGET_RATIO, BENCH_LE, 2.0);
    bench_row_extra(r, "accel_min_ns", a[0]);
    bench_row_extra(r, "accel_max_ns", a[R - 1]);
    bench_row_extra(r, "baseline_min_ns", f[0]);
    bench_row_extra(r, "spin_ns", (double)BENCH_SPIN_NS);
    bench_row_extra(r, "iters", cfg.pingpong_iters);
    bench_row_extra(r, "rounds", R);
    bench_row_extra(r, "pinned", pp_cpus[0] >= 0);
    r = bench_row_add("pingpong_cnd", "1 signal ping-pong vs mtx/cnd", "ns", am, "mtx/cnd", cm,
                      BENCH_TARGET_NONE, BENCH_LE, 0);
    bench_row_extra(r, "baseline_min_ns", c[0]);
    free(a); free(f); free(c);
}

/* The rig figures 2 and 3 share: a compute queue, a signal, and a one-buffer program whose 64-byte
   buffer the kernel counts into (mapped: the figures check the counter). */
typedef struct counter_rig { accel_queue* q; accel_signal* s; accel_buffer* buf; accel_program* prog; uint32_t* counter; } counter_rig;
static counter_rig counter_rig_open(accel_device* dev, accel_cpu_kernel kernel) {
    counter_rig r;
    check(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &r.q), "accel_queue_create");
    check(accel_signal_create(dev, 0, &r.s), "accel_signal_create");
    check(accel_buffer_create(dev, &(accel_buffer_desc){ .size = 64 }, &r.buf), "accel_buffer_create");
    check(accel_program_create(dev, &(accel_program_desc){ .name = "count", .cpu = kernel, .buffer_count = 1 }, &r.prog),
          "accel_program_create");
    r.counter = (uint32_t*)accel_buffer_map(r.buf);
    if (!r.counter) { fprintf(stderr, "bench: buffer not mappable\n"); exit(2); }
    return r;
}
static void counter_rig_close(counter_rig* r) {
    accel_program_destroy(r->prog);
    accel_buffer_destroy(r->buf);
    accel_signal_destroy(r->s);
    accel_queue_destroy(r->q);
}

/* ==== figure 2: submit-to-complete latency of a one-group exec ==== */
static void fig_exec_latency(accel_device* dev) {
    counter_rig rig = counter_rig_open(dev, k_count_cpu);
    accel_queue* q = rig.q;
    accel_signal* s = rig.s;
    accel_buffer* buf = rig.buf;
    accel_program* prog = rig.prog;
    uint32_t* counter = rig.counter;
    uint64_t same_cpu = 0, slow = 0;

    const uint32_t warm = cfg.latency_iters / 5 + 5, K = cfg.latency_iters;
    const int R = cfg.rounds;
    size_t ns = (size_t)R * K;
    double* a = calloc(ns, sizeof(double));
    double* o = calloc(ns, sizeof(double));
    uint64_t value = 0, execs = 0;
    int nt = (int)cfg.threads;
    /* per-thread slots, a cache line apart: the OpenMP body writes to memory so it cannot vanish */
    static volatile uint32_t omp_sink[64 * 16];
    uint64_t omp_regions = 0;

    for (int round = 0; round < R; round++) {
        bench_sleep_ns(BENCH_SETTLE_NS);
        for (uint32_t i = 0; i < warm + K; i++) {
            uint64_t t0 = bench_now_ns();
            accel_queue_exec(q, prog, &buf, 1, NULL, 0, accel_exec_1d(1, 1));
            accel_queue_signal(q, s, ++value);
            check(accel_queue_submit(q), "accel_queue_submit");
            check(accel_signal_wait(s, value, BENCH_WAIT_NS), "accel_signal_wait");
            uint64_t t1 = bench_now_ns();
            execs++;
            if (i >= warm) {
                a[(size_t)round * K + (i - warm)] = (double)(t1 - t0);
                same_cpu += counter[1] == (uint32_t)sched_getcpu();
                slow += t1 - t0 > 20000;
            }
        }
        bench_sleep_ns(BENCH_SETTLE_NS);
        for (uint32_t i = 0; i < warm + K; i++) {
            uint64_t t0 = bench_now_ns();
#pragma omp parallel for num_threads(nt) schedule(static)
            for (int t = 0; t < nt; t++) omp_sink[(t & 63) * 16] += 1;
            uint64_t t1 = bench_now_ns();
            omp_regions++;
            if (i >= warm) o[(size_t)round * K + (i - warm)] = (double)(t1 - t0);
        }
    }
    if (counter[0] != (uint32_t)execs) bench_fail("exec latency: kernel ran %u times, expected %llu", counter[0], (unsigned long long)execs);
    if (omp_sink[0] != (uint32_t)omp_regions) bench_fail("exec latency: OpenMP body ran %u times, expected %llu", omp_sink[0], (unsigned long long)omp_regions);

    double am = bench_median(a, ns), om = bench_median(o, ns);
    bench_row* r = bench_row_add("exec_latency", "2 one-group exec submit->complete", "ns", am, "omp fork-join", om,
                                 BENCH_TARGET_RATIO, BENCH_LE, 2.0);
    bench_row_extra(r, "accel_p10_ns", bench_quantile_sorted(a, ns, 0.10));
    bench_row_extra(r, "accel_p90_ns", bench_quantile_sorted(a, ns, 0.90));
    bench_row_extra(r, "baseline_p10_ns", bench_quantile_sorted(o, ns, 0.10));
    bench_row_extra(r, "baseline_p90_ns", bench_quantile_sorted(o, ns, 0.90));
    bench_row_extra(r, "threads", nt);
    bench_row_extra(r, "samples", (double)ns);
    /* evidence for slow samples: the kernel ran on the CPU the host thread was waiting on */
    bench_row_extra(r, "accel_over_20us_pct", 100.0 * (double)slow / (double)ns);
    bench_row_extra(r, "accel_kernel_on_host_cpu_pct", 100.0 * (double)same_cpu / (double)ns);
    free(a); free(o);
    counter_rig_close(&rig);
}

/* ==== figures 2t, 2u: the same round trip, and a small SAXPY, on a traced device ==== */
/* What one traced round trip runs: the counter rig's one-group exec (2t), or a SAXPY over SMALL_N
   floats in 64 groups (2u: a small dispatch with work in it, spread over the pool). */
#define SMALL_N 16384u
typedef struct trace_rig { counter_rig r; accel_buffer* y; accel_buffer* x; accel_program* saxpy; bool small; } trace_rig;
static trace_rig trace_rig_open(accel_device* dev, bool small) {
    trace_rig t;
    memset(&t, 0, sizeof t);
    t.r = counter_rig_open(dev, k_count_cpu);
    t.small = small;
    if (small) {
        check(accel_buffer_create(dev, &(accel_buffer_desc){ .size = SMALL_N * sizeof(float) }, &t.y), "accel_buffer_create y");
        check(accel_buffer_create(dev, &(accel_buffer_desc){ .size = SMALL_N * sizeof(float) }, &t.x), "accel_buffer_create x");
        check(accel_program_create(dev, &(accel_program_desc){ .name = "saxpy", .cpu = k_saxpy, .buffer_count = 2, .constant_count = 1 }, &t.saxpy),
              "accel_program_create");
        float* x = (float*)accel_buffer_map(t.x);
        float* y = (float*)accel_buffer_map(t.y);
        if (!x || !y) { fprintf(stderr, "bench: saxpy memory not mappable\n"); exit(2); }
        for (uint32_t i = 0; i < SMALL_N; i++) { x[i] = 1.0f; y[i] = 0.0f; }
    }
    return t;
}
static void trace_rig_close(trace_rig* t) {
    if (t->small) { accel_program_destroy(t->saxpy); accel_buffer_destroy(t->y); accel_buffer_destroy(t->x); }
    counter_rig_close(&t->r);
}
/* Median submit->complete of `n` round trips on the rig (exec + signal, submit, wait). */
static double exec_round_trips(trace_rig* t, uint64_t* value, uint32_t n, double* samples) {
    const float alpha = 1.0f;
    uint32_t abits;
    memcpy(&abits, &alpha, sizeof abits);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t t0 = bench_now_ns();
        if (t->small) {
            accel_buffer* bufs[2] = { t->y, t->x };
            accel_queue_exec(t->r.q, t->saxpy, bufs, 2, &abits, 1, accel_exec_1d(SMALL_N, SMALL_N / 64));
        } else {
            accel_queue_exec(t->r.q, t->r.prog, &t->r.buf, 1, NULL, 0, accel_exec_1d(1, 1));
        }
        accel_queue_signal(t->r.q, t->r.s, ++*value);
        check(accel_queue_submit(t->r.q), "accel_queue_submit");
        check(accel_signal_wait(t->r.s, *value, BENCH_WAIT_NS), "accel_signal_wait");
        samples[i] = (double)(bench_now_ns() - t0);
    }
    return bench_median(samples, n);
}
/* Tracing on (DESIGN 6.4: a small dispatch at most 10% slower): each round makes a fresh device, traced
   (to $BENCH_TRACE or build/bench_trace.json, removed after) or not, warms it up, measures K round
   trips and destroys it; the two kinds alternate, and which goes first too. (Two devices alive side by
   side made the figure depend on where each one's pool threads happened to land: the second device
   created read 2x faster on 2u, whichever kind it was.) Each round trip adds 7 events (submit, exec,
   signal span and instant, wait, flow ends); full buffers are copied out raw inside the timed loop (the
   JSON is written at destroy, outside it). 2t is the cheapest dispatch there is (tracing adds a fixed
   ~0.2-0.3 us per round trip); 2u a small one with work in it. */
static double trace_round(bool small, bool traced, const char* path, uint32_t K, double* samples, uint64_t* total) {
    accel_device* dev;
    check(accel_device_create(&(accel_device_desc){ .cpu_threads = cfg.threads, .label = "bench", .trace_path = traced ? path : NULL }, &dev),
          "accel_device_create");
    trace_rig t = trace_rig_open(dev, small);
    uint64_t v = 0;
    exec_round_trips(&t, &v, K / 4, samples);   /* warm-up */
    bench_sleep_ns(BENCH_SETTLE_NS);
    double m = exec_round_trips(&t, &v, K, samples);
    if (!small && t.r.counter[0] != (uint32_t)v) bench_fail("traced latency: kernel ran %u times, expected %llu", t.r.counter[0], (unsigned long long)v);
    if (small) {
        const float* y = (const float*)accel_buffer_map(t.y);
        if (y[0] != (float)v || y[SMALL_N - 1] != (float)v) bench_fail("traced saxpy: y holds %g, expected %llu", y[SMALL_N - 1], (unsigned long long)v);
    }
    *total += v;
    trace_rig_close(&t);
    accel_device_destroy(dev);   /* traced: writes the file */
    return m;
}
static void fig_trace_latency_one(bool small) {
    const char* path = getenv("BENCH_TRACE") ? getenv("BENCH_TRACE") : "build/bench_trace.json";
    const uint32_t K = cfg.latency_iters * (small ? 2 : 4);
    const int R = cfg.rounds;
    double* a = calloc((size_t)R, sizeof(double));
    double* b = calloc((size_t)R, sizeof(double));
    double* samples = calloc(K, sizeof(double));
    uint64_t traced_total = 0, plain_total = 0;
    for (int round = 0; round < R; round++) {
        for (int o = 0; o < 2; o++) {
            bool traced = ((round + o) & 1) != 0;
            bench_sleep_ns(BENCH_SETTLE_NS);
            if (traced) a[round] = trace_round(small, true, path, K, samples, &traced_total);
            else b[round] = trace_round(small, false, path, K, samples, &plain_total);
        }
    }
    double am = bench_median(a, (size_t)R), bm = bench_median(b, (size_t)R);
    bench_row* r = small ? bench_row_add("traced_small_dispatch", "2u SAXPY 16K floats, traced", "ns", am, "untraced", bm, BENCH_TARGET_RATIO, BENCH_LE, 1.10)
                         : bench_row_add("traced_exec_latency", "2t one-group exec submit->complete, traced", "ns", am, "untraced", bm,
                                         BENCH_TARGET_RATIO, BENCH_LE, 1.10);
    bench_row_extra(r, "round_trips", (double)traced_total);
    bench_row_extra(r, "added_ns", am - bm);
    free(a); free(b); free(samples);
    remove(path);
}
static void fig_trace_latency(void) {
    fig_trace_latency_one(false);
    fig_trace_latency_one(true);
}

/* ==== figure 3: many one-group execs in one batch ==== */
static void fig_batch(accel_device* dev) {
    counter_rig rig = counter_rig_open(dev, k_count);
    accel_queue* q = rig.q;
    accel_signal* s = rig.s;
    accel_buffer* buf = rig.buf;
    accel_program* prog = rig.prog;
    uint32_t* counter = rig.counter;

    /* the baseline: the same kernel through a function pointer the compiler cannot see through */
    uint32_t direct_counter[16] = { 0 };
    void* direct_ptrs[1] = { direct_counter };
    size_t direct_sizes[1] = { sizeof direct_counter };
    accel_dispatch d;
    memset(&d, 0, sizeof d);
    for (int k = 0; k < 3; k++) { d.group_count[k] = d.group_size[k] = d.global_size[k] = 1; }
    d.buffers = direct_ptrs;
    d.buffer_sizes = direct_sizes;
    d.buffer_count = 1;
    void (*volatile kernel)(const accel_dispatch*) = k_count;

    const uint32_t N = cfg.batch_cmds;
    const int R = cfg.rounds + 1;               /* round 0 is the warm-up */
    double* a = calloc((size_t)R, sizeof(double));
    double* rec = calloc((size_t)R, sizeof(double));
    double* run = calloc((size_t)R, sizeof(double));
    double* sub = calloc((size_t)R, sizeof(double));
    double* b = calloc((size_t)R, sizeof(double));
    uint64_t value = 0;
    for (int round = 0; round < R; round++) {
        uint32_t before = counter[0];
        uint64_t t0 = bench_now_ns();
        for (uint32_t i = 0; i < N; i++) accel_queue_exec(q, prog, &buf, 1, NULL, 0, accel_exec_1d(1, 1));
        accel_queue_signal(q, s, ++value);
        uint64_t t1 = bench_now_ns();
        check(accel_queue_submit(q), "accel_queue_submit");
        uint64_t t2 = bench_now_ns();
        check(accel_signal_wait(s, value, BENCH_WAIT_NS), "accel_signal_wait");
        uint64_t t3 = bench_now_ns();
        if (counter[0] - before != N) bench_fail("batch: %u of %u execs ran", counter[0] - before, N);
        a[round] = (double)(t3 - t0) / N;
        rec[round] = (double)(t1 - t0) / N;
        sub[round] = (double)(t2 - t1);
        run[round] = (double)(t3 - t2) / N;

        uint32_t dbefore = direct_counter[0];
        uint64_t u0 = bench_now_ns();
        for (uint32_t i = 0; i < N; i++) kernel(&d);
        uint64_t u1 = bench_now_ns();
        if (direct_counter[0] - dbefore != N) bench_fail("batch: direct loop ran %u of %u calls", direct_counter[0] - dbefore, N);
        b[round] = (double)(u1 - u0) / N;
    }
    /* drop the warm-up round */
    double am = bench_median(a + 1, (size_t)R - 1), bm = bench_median(b + 1, (size_t)R - 1);
    double recm = bench_median(rec + 1, (size_t)R - 1), runm = bench_median(run + 1, (size_t)R - 1);
    double subm = bench_median(sub + 1, (size_t)R - 1);
    bench_row* r = bench_row_add("batch_exec", "3 10k execs in one batch, per cmd", "ns", am, "direct call", bm,
                                 BENCH_TARGET_NONE, BENCH_LE, 0);
    bench_row_extra(r, "accel_record_ns", recm);
    bench_row_extra(r, "accel_submit_call_ns", subm);   /* the whole submit call; long when the woken executor preempts the host */
    bench_row_extra(r, "accel_execute_ns", runm);        /* per command, from submit's return to the wait's */
    bench_row_extra(r, "commands", N);
    free(a); free(rec); free(run); free(sub); free(b);
    counter_rig_close(&rig);
}

/* ==== figure 8: replaying a recorded list vs recording it anew ==== */
/* adds constant 0 to the counter: every exec ran exactly once, with the constant it was given */
static void k_add_const(const accel_dispatch* d) {
    uint32_t* c = (uint32_t*)d->buffers[0];
    c[0] += d->constants[0];
}
enum { REPLAY_CMDS = 64 };
/* One batch of the 64 execs (+ a signal), submitted and waited for; returns ns per command. */
static double replay_batch(counter_rig* rig, accel_commands* list, const accel_patch* patch, uint32_t step, uint64_t* value) {
    uint64_t t0 = bench_now_ns();
    if (list) accel_queue_replay(rig->q, list, patch, patch ? 1 : 0);
    else for (uint32_t i = 0; i < REPLAY_CMDS; i++) accel_queue_exec(rig->q, rig->prog, &rig->buf, 1, &step, 1, accel_exec_1d(1, 1));
    accel_queue_signal(rig->q, rig->s, ++*value);
    check(accel_queue_submit(rig->q), "accel_queue_submit");
    check(accel_signal_wait(rig->s, *value, BENCH_WAIT_NS), "accel_signal_wait");
    return (double)(bench_now_ns() - t0) / REPLAY_CMDS;
}
static void fig_replay_one(accel_device* dev, bool patched) {
    counter_rig rig = counter_rig_open(dev, k_add_const);
    accel_commands* list;
    uint32_t one = 1, iters = cfg.quick ? 200 : 1000, expect = 0;
    uint64_t value = 0;
    const int R = cfg.rounds + 1;                /* round 0 is the warm-up */
    double *a = calloc((size_t)R, sizeof(double)), *b = calloc((size_t)R, sizeof(double)), *t = calloc(iters, sizeof(double));
    accel_program_destroy(rig.prog);
    check(accel_program_create(dev, &(accel_program_desc){ .name = "add", .cpu = k_add_const, .buffer_count = 1, .constant_count = 1 },
                               &rig.prog), "accel_program_create");
    check(accel_queue_record_begin(rig.q), "accel_queue_record_begin");
    for (uint32_t i = 0; i < REPLAY_CMDS; i++) accel_queue_exec(rig.q, rig.prog, &rig.buf, 1, &one, 1, accel_exec_1d(1, 1));
    check(accel_queue_record_end(rig.q, &list), "accel_queue_record_end");
    for (int round = 0; round < R; round++) {
        for (uint32_t i = 0; i < iters; i++) {
            uint32_t step = patched ? i + 2 : 1;
            accel_patch p = { (uint32_t)(i % REPLAY_CMDS), 0, NULL, step };
            t[i] = replay_batch(&rig, list, patched ? &p : NULL, step, &value);
            expect += (REPLAY_CMDS - 1) + step;
        }
        a[round] = bench_median(t, iters);
        for (uint32_t i = 0; i < iters; i++) {
            uint32_t step = patched ? i + 2 : 1;
            t[i] = replay_batch(&rig, NULL, NULL, step, &value);
            expect += REPLAY_CMDS * step;
        }
        b[round] = bench_median(t, iters);
    }
    if (rig.counter[0] != expect) bench_fail("replay: counter %u, expected %u", rig.counter[0], expect);
    double am = bench_median(a + 1, (size_t)R - 1), bm = bench_median(b + 1, (size_t)R - 1);
    bench_row* r = bench_row_add(patched ? "replay_patched" : "replay", patched ? "8b same, 1 constant patched, per cmd"
                                 : "8 64-exec list replayed, per cmd", "ns", am, "recorded anew", bm, BENCH_TARGET_RATIO, BENCH_LE, 0.5);
    bench_row_extra(r, "factor", bm / am);
    bench_row_extra(r, "commands", REPLAY_CMDS);
    accel_commands_destroy(list);
    free(a); free(b); free(t);
    counter_rig_close(&rig);
}
static void fig_replay(accel_device* dev) {
    fig_replay_one(dev, false);
    fig_replay_one(dev, true);
}

/* ==== figure 10: indirect exec vs direct exec of the same size ==== */
/* Each sample: one exec (side 0 indirect, its counts written once by the host; side 1 direct, the same
   grid), a signal, submit, wait. SAXPY with a = 1 over x = 1: y counts the execs that ran. */
typedef struct indirect_fig {
    counter_rig r;
    accel_buffer *counts, *bufs[2];
    accel_program* saxpy;
    uint32_t groups, a_bits;
    uint64_t value, execs;
} indirect_fig;
static double indirect_sample(void* ctx, int side) {
    indirect_fig* f = (indirect_fig*)ctx;
    static const uint32_t local[3] = { 256, 1, 1 };
    uint64_t t0 = bench_now_ns();
    if (side == 0) accel_queue_exec_indirect(f->r.q, f->saxpy, f->bufs, 2, &f->a_bits, 1, local, f->counts, 0);
    else accel_queue_exec(f->r.q, f->saxpy, f->bufs, 2, &f->a_bits, 1, accel_exec_1d(f->groups * 256, 256));
    accel_queue_signal(f->r.q, f->r.s, ++f->value);
    check(accel_queue_submit(f->r.q), "accel_queue_submit");
    check(accel_signal_wait(f->r.s, f->value, BENCH_WAIT_NS), "accel_signal_wait");
    f->execs++;
    return (double)(bench_now_ns() - t0);
}
static void fig_indirect_one(accel_device* dev, uint32_t groups) {
    indirect_fig f;
    uint32_t counts[3] = { groups, 1, 1 };
    size_t n = (size_t)groups * 256;
    float one = 1.0f;
    bench_pair res;
    memset(&f, 0, sizeof f);
    f.r = counter_rig_open(dev, k_count);
    f.groups = groups;
    memcpy(&f.a_bits, &one, 4);
    check(accel_program_create(dev, &(accel_program_desc){ .name = "saxpy", .cpu = k_saxpy, .buffer_count = 2,
                                                           .constant_count = 1 }, &f.saxpy), "accel_program_create");
    for (int i = 0; i < 2; i++)
        check(accel_buffer_create(dev, &(accel_buffer_desc){ .size = n * 4 }, &f.bufs[i]), "accel_buffer_create");
    check(accel_buffer_create(dev, &(accel_buffer_desc){ .size = 12 }, &f.counts), "accel_buffer_create");
    check(accel_buffer_write(f.counts, 0, counts, sizeof counts), "accel_buffer_write");
    float* y = (float*)accel_buffer_map(f.bufs[0]);
    float* x = (float*)accel_buffer_map(f.bufs[1]);
    for (size_t i = 0; i < n; i++) { y[i] = 0; x[i] = 1; }
    bench_pair_run(cfg.rounds * 2, cfg.latency_iters, indirect_sample, &f, NULL, &res);
    if (y[0] != (float)f.execs || y[n - 1] != (float)f.execs)
        bench_fail("indirect: y holds %g and %g, expected %llu", y[0], y[n - 1], (unsigned long long)f.execs);
    bench_row* r = bench_row_add(groups == 1 ? "indirect" : "indirect_64", groups == 1 ? "10 indirect exec, 1 group"
                                 : "10b indirect exec, 64 groups", "ns", res.accel, "direct exec", res.baseline,
                                 BENCH_TARGET_RATIO, BENCH_LE, 1.05);
    bench_row_extra(r, "paired_ratio", res.paired);
    bench_row_extra(r, "groups", groups);
    bench_row_extra(r, "samples", (double)cfg.latency_iters * cfg.rounds * 2);
    accel_program_destroy(f.saxpy);
    for (int i = 0; i < 2; i++) accel_buffer_destroy(f.bufs[i]);
    accel_buffer_destroy(f.counts);
    counter_rig_close(&f.r);
}
static void fig_indirect(accel_device* dev) {
    fig_indirect_one(dev, 1);
    fig_indirect_one(dev, 64);
}

/* ==== figure 11: queue-ordered memory ==== */
enum { QMEM_BYTES = 1 << 20 };
/* result[0] = scratch[0] + scratch[last] (+ c, written to scratch[0] first when the step does not fill) */
static void k_qmem_step(const accel_dispatch* d) {
    uint32_t *scratch = (uint32_t*)d->buffers[0], *result = (uint32_t*)d->buffers[1];
    size_t last = d->buffer_sizes[0] / 4 - 1;
    if (d->constants[1]) { scratch[0] = d->constants[0]; scratch[last] = d->constants[0]; }
    result[0] = scratch[0] + scratch[last] + 1;
}
typedef struct qmem_rig {
    accel_device* dev; accel_queue* q; accel_signal* s; accel_program* prog;
    accel_buffer *once, *result;
    uint64_t value;
    int made;                  /* how side 0 makes its scratch per step: 0 queue memory, 1 buffer_create */
    bool fill;                 /* the step fills its whole scratch (else it writes 2 words of it) */
} qmem_rig;
/* One step: [make the scratch,] fill it (or write two words of it), read it into the result, [drop the
   scratch,] signal, submit, wait. Side 0 makes the scratch per step, side 1 uses the one made once.
   Returns ns. */
static double qmem_sample(void* ctx, int side) {
    qmem_rig* r = (qmem_rig*)ctx;
    uint32_t k[2] = { (uint32_t)r->value, r->fill ? 0u : 1u };
    accel_buffer* scratch = r->once;
    uint64_t t0 = bench_now_ns();
    if (side == 0 && r->made == 0) check(accel_queue_alloc(r->q, QMEM_BYTES, ACCEL_MEMORY_DEVICE, &scratch), "accel_queue_alloc");
    if (side == 0 && r->made == 1)
        check(accel_buffer_create(r->dev, &(accel_buffer_desc){ .size = QMEM_BYTES }, &scratch), "accel_buffer_create");
    accel_buffer* bufs[2] = { scratch, r->result };
    if (r->fill) accel_queue_fill(r->q, scratch, 0, QMEM_BYTES, k[0]);
    accel_queue_exec(r->q, r->prog, bufs, 2, k, 2, accel_exec_1d(1, 1));
    if (side == 0 && r->made == 0) accel_queue_free(r->q, scratch);
    if (side == 0 && r->made == 1) accel_buffer_destroy(scratch);
    accel_queue_signal(r->q, r->s, ++r->value);
    check(accel_queue_submit(r->q), "accel_queue_submit");
    check(accel_signal_wait(r->s, r->value, BENCH_WAIT_NS), "accel_signal_wait");
    double t = (double)(bench_now_ns() - t0);
    if (*(const uint32_t*)accel_buffer_map(r->result) != 2 * k[0] + 1)
        bench_fail("qmem: result %u, expected %u", *(const uint32_t*)accel_buffer_map(r->result), 2 * k[0] + 1);
    return t;
}
static void fig_qmem(accel_device* dev) {
    static const struct { int made; bool fill; const char *figure, *title; } rows[3] = {
        { 0, true, "qmem_step", "11 1 MiB scratch step, queue_alloc" },
        { 0, false, "qmem_tiny_step", "11c same, 2 words written, queue_alloc" },
        { 1, true, "qmem_create_step", "11b 1 MiB step, buffer_create+destroy" },
    };
    qmem_rig r = { 0 };
    bench_pair p;
    r.dev = dev;
    check(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &r.q), "accel_queue_create");
    check(accel_signal_create(dev, 0, &r.s), "accel_signal_create");
    check(accel_program_create(dev, &(accel_program_desc){ .name = "qmem_step", .cpu = k_qmem_step, .buffer_count = 2,
                                                            .constant_count = 2 }, &r.prog), "accel_program_create");
    check(accel_buffer_create(dev, &(accel_buffer_desc){ .size = QMEM_BYTES }, &r.once), "accel_buffer_create");
    check(accel_buffer_create(dev, &(accel_buffer_desc){ .size = 64 }, &r.result), "accel_buffer_create");
    for (int i = 0; i < 3; i++) {
        r.made = rows[i].made;
        r.fill = rows[i].fill;
        bench_pair_run(cfg.rounds, cfg.quick ? 50 : 200, qmem_sample, &r, NULL, &p);
        bench_row* row = bench_row_add(rows[i].figure, rows[i].title, "ns", p.accel, "scratch made once", p.baseline,
                                       i == 0 ? BENCH_TARGET_RATIO : BENCH_TARGET_NONE, BENCH_LE, i == 0 ? 1.10 : 0);
        bench_row_extra(row, "paired_ratio", p.paired);
        bench_row_extra(row, "extra_ns", p.accel - p.baseline);
    }
    accel_buffer_destroy(r.once);
    accel_buffer_destroy(r.result);
    accel_program_destroy(r.prog);
    accel_signal_destroy(r.s);
    accel_queue_destroy(r.q);
}

/* ==== figure 4: SAXPY vs OpenMP vs memcpy ==== */
static uint32_t pick_local(accel_device* dev, uint32_t want) {
    accel_device_info info;
    check(accel_device_info_get(dev, &info), "accel_device_info_get");
    uint32_t l = want;
    if (info.max_group_size[0] && l > info.max_group_size[0]) l = info.max_group_size[0];
    if (info.max_group_invocations && l > info.max_group_invocations) l = info.max_group_invocations;
    return l ? l : 1;
}

static void fig_saxpy(accel_device* dev) {
    const size_t n = cfg.saxpy_n, bytes = n * sizeof(float);
    accel_queue* q;
    accel_signal* s;
    accel_buffer *xb, *yb;
    accel_program* prog;
    check(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q), "accel_queue_create");
    check(accel_signal_create(dev, 0, &s), "accel_signal_create");
    check(accel_buffer_create(dev, &(accel_buffer_desc){ .size = bytes }, &xb), "accel_buffer_create x");
    check(accel_buffer_create(dev, &(accel_buffer_desc){ .size = bytes }, &yb), "accel_buffer_create y");
    check(accel_program_create(dev, &(accel_program_desc){ .name = "saxpy", .cpu = k_saxpy, .buffer_count = 2, .constant_count = 1 }, &prog),
          "accel_program_create");
    /* the OpenMP baseline runs over the very same memory */
    float* x = (float*)accel_buffer_map(xb);
    float* y = (float*)accel_buffer_map(yb);
    float* dst = malloc(bytes);
    if (!x || !y || !dst) { fprintf(stderr, "bench: saxpy memory not mappable/allocatable\n"); exit(2); }
    for (size_t i = 0; i < n; i++) { x[i] = (float)(i & 15); y[i] = 0.0f; }
    memset(dst, 0, bytes);

    const float alpha = 2.0f;
    uint32_t abits;
    memcpy(&abits, &alpha, sizeof abits);
    const uint32_t local = pick_local(dev, 16384);
    accel_buffer* bufs[2] = { yb, xb };
    uint64_t value = 0, passes = 0;
    const int nt = (int)cfg.threads;
    const int R = 2 * cfg.rounds + 1;           /* runs are short: twice the rounds; round 0 is the warm-up */
    double* a = calloc((size_t)R, sizeof(double));
    double* o = calloc((size_t)R, sizeof(double));
    double* m = calloc((size_t)R, sizeof(double));

    for (int round = 0; round < R; round++) {
        bench_sleep_ns(BENCH_SETTLE_NS);
        uint64_t t0 = bench_now_ns();
        accel_queue_exec(q, prog, bufs, 2, &abits, 1, accel_exec_1d((uint32_t)n, local));
        accel_queue_signal(q, s, ++value);
        check(accel_queue_submit(q), "accel_queue_submit");
        check(accel_signal_wait(s, value, BENCH_WAIT_NS), "accel_signal_wait");
        uint64_t t1 = bench_now_ns();
        a[round] = (double)(t1 - t0);
        passes++;
        if (round == 0) {   /* accel alone so far: every element exactly once */
            for (size_t i = 0; i < n; i++)
                if (y[i] != alpha * x[i]) { bench_fail("saxpy: accel y[%zu] = %g, expected %g", i, (double)y[i], (double)(alpha * x[i])); break; }
        }

        bench_sleep_ns(BENCH_SETTLE_NS);
        t0 = bench_now_ns();
#pragma omp parallel for num_threads(nt) schedule(static)
        for (int t = 0; t < nt; t++) {
            size_t i0 = n * (size_t)t / (size_t)nt, i1 = n * (size_t)(t + 1) / (size_t)nt;
            saxpy_range(y, x, alpha, i0, i1);
        }
        t1 = bench_now_ns();
        o[round] = (double)(t1 - t0);
        passes++;

        bench_sleep_ns(BENCH_SETTLE_NS);
        t0 = bench_now_ns();
        memcpy(dst, x, bytes);
        t1 = bench_now_ns();
        m[round] = (double)(t1 - t0);
    }
    /* y = alpha * passes * x, exact in float for these small integers */
    for (size_t i = 0; i < n; i++) {
        float want = alpha * (float)passes * x[i];
        if (y[i] != want) { bench_fail("saxpy: y[%zu] = %g after %llu passes, expected %g", i, (double)y[i], (unsigned long long)passes, (double)want); break; }
    }
    if (memcmp(dst, x, bytes) != 0) bench_fail("saxpy: memcpy result differs");

    double at = bench_median(a + 1, (size_t)R - 1), ot = bench_median(o + 1, (size_t)R - 1), mt = bench_median(m + 1, (size_t)R - 1);
    double ag = 12.0 * (double)n / at, og = 12.0 * (double)n / ot, mg = 2.0 * (double)bytes / mt;  /* bytes/ns = GB/s */
    bench_row* r = bench_row_add("saxpy", "4 SAXPY 3x64MiB, GB/s (12 B/elem)", "GB/s", ag, "omp parallel for", og,
                                 BENCH_TARGET_RATIO, BENCH_GE, 0.95);
    bench_row_extra(r, "accel_ms", at / 1e6);
    bench_row_extra(r, "baseline_ms", ot / 1e6);
    bench_row_extra(r, "elements", (double)n);
    bench_row_extra(r, "group_size", local);
    bench_row_extra(r, "threads", nt);
    r = bench_row_add("saxpy_memcpy", "4 SAXPY vs memcpy bandwidth", "GB/s", ag, "memcpy (1 thread)", mg,
                      BENCH_TARGET_NONE, BENCH_GE, 0);
    bench_row_extra(r, "memcpy_ms", mt / 1e6);
    free(a); free(o); free(m);
    free(dst);
    accel_program_destroy(prog);
    accel_buffer_destroy(xb);
    accel_buffer_destroy(yb);
    accel_signal_destroy(s);
    accel_queue_destroy(q);
}

/* ==== figure 5: compute-bound speed-up, 1 lane -> all cores ==== */
typedef struct compute_dev {
    accel_device* dev;
    accel_queue* q;
    accel_signal* s;
    accel_buffer *xb, *yb;
    accel_program* prog;
    uint64_t value;
} compute_dev;

static void compute_dev_open(compute_dev* c, uint32_t threads, float* x, float* y, size_t bytes) {
    memset(c, 0, sizeof *c);
    check(accel_device_create(&(accel_device_desc){ .cpu_threads = threads, .label = "bench compute" }, &c->dev), "accel_device_create");
    check(accel_queue_create(c->dev, ACCEL_QUEUE_COMPUTE, &c->q), "accel_queue_create");
    check(accel_signal_create(c->dev, 0, &c->s), "accel_signal_create");
    check(accel_buffer_create(c->dev, &(accel_buffer_desc){ .size = bytes, .host_ptr = x }, &c->xb), "accel_buffer_create (wrap)");
    check(accel_buffer_create(c->dev, &(accel_buffer_desc){ .size = bytes, .host_ptr = y }, &c->yb), "accel_buffer_create (wrap)");
    check(accel_program_create(c->dev, &(accel_program_desc){ .name = "compute", .cpu = k_compute, .buffer_count = 2, .constant_count = 1 }, &c->prog),
          "accel_program_create");
}
static void compute_dev_close(compute_dev* c) {
    accel_program_destroy(c->prog);
    accel_buffer_destroy(c->xb);
    accel_buffer_destroy(c->yb);
    accel_signal_destroy(c->s);
    accel_queue_destroy(c->q);
    accel_device_destroy(c->dev);
}
static double compute_dev_run(compute_dev* c, uint32_t n, uint32_t local) {
    accel_buffer* bufs[2] = { c->yb, c->xb };
    uint64_t t0 = bench_now_ns();
    accel_queue_exec(c->q, c->prog, bufs, 2, &cfg.compute_iters, 1, accel_exec_1d(n, local));
    accel_queue_signal(c->q, c->s, ++c->value);
    check(accel_queue_submit(c->q), "accel_queue_submit");
    check(accel_signal_wait(c->s, c->value, BENCH_WAIT_NS), "accel_signal_wait");
    return (double)(bench_now_ns() - t0);
}
static double compute_omp_run(float* y, const float* x, size_t n, int nt) {
    uint64_t t0 = bench_now_ns();
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int t = 0; t < nt; t++) {
        size_t i0 = n * (size_t)t / (size_t)nt, i1 = n * (size_t)(t + 1) / (size_t)nt;
        compute_range(y, x, cfg.compute_iters, i0, i1);
    }
    return (double)(bench_now_ns() - t0);
}
static void compute_verify(const float* y, const float* x, size_t n, const char* who) {
    for (size_t i = 0; i < n; i += 1 + (i % 7)) {   /* a scattered subset */
        float v = x[i];
        for (uint32_t k = 0; k < cfg.compute_iters; k++) v = v * 0.9990f + 0.0010f;
        if (fabsf(y[i] - v) > 1e-5f * (1.0f + fabsf(v))) { bench_fail("compute (%s): y[%zu] = %g, expected %g", who, i, (double)y[i], (double)v); return; }
    }
}

static void fig_compute(void) {
    const size_t n = cfg.compute_n, bytes = n * sizeof(float);
    float* x = malloc(bytes);
    float* y = malloc(bytes);
    if (!x || !y) { fprintf(stderr, "bench: out of memory\n"); exit(2); }
    for (size_t i = 0; i < n; i++) { x[i] = (float)(i % 1000) * 0.001f; }
    compute_dev one, all;
    compute_dev_open(&one, 1, x, y, bytes);
    compute_dev_open(&all, cfg.threads, x, y, bytes);
    const uint32_t local = pick_local(all.dev, 1024);
    const int nt = (int)cfg.threads;
    const int R = cfg.rounds + 1;               /* round 0 is the warm-up */
    double *a1 = calloc((size_t)R, sizeof(double)), *an = calloc((size_t)R, sizeof(double));
    double *o1 = calloc((size_t)R, sizeof(double)), *on = calloc((size_t)R, sizeof(double));
    for (int round = 0; round < R; round++) {
        memset(y, 0, bytes);
        bench_sleep_ns(BENCH_SETTLE_NS);
        a1[round] = compute_dev_run(&one, (uint32_t)n, local);
        if (round == 0) compute_verify(y, x, n, "accel 1 lane");
        memset(y, 0, bytes);
        bench_sleep_ns(BENCH_SETTLE_NS);
        an[round] = compute_dev_run(&all, (uint32_t)n, local);
        if (round == 0) compute_verify(y, x, n, "accel all lanes");
        memset(y, 0, bytes);
        bench_sleep_ns(BENCH_SETTLE_NS);
        o1[round] = compute_omp_run(y, x, n, 1);
        if (round == 0) compute_verify(y, x, n, "omp 1 thread");
        memset(y, 0, bytes);
        bench_sleep_ns(BENCH_SETTLE_NS);
        on[round] = compute_omp_run(y, x, n, nt);
        if (round == 0) compute_verify(y, x, n, "omp all threads");
    }
    /* speed-up: the median of each round's own ratio (1 lane and all lanes ran back to back, so a
       round sees one state of the machine), not a ratio of medians taken at different moments */
    size_t k = (size_t)R - 1;
    double* as = calloc(k, sizeof(double));
    double* os = calloc(k, sizeof(double));
    for (size_t i = 0; i < k; i++) { as[i] = a1[i + 1] / an[i + 1]; os[i] = o1[i + 1] / on[i + 1]; }
    double asm_ = bench_median(as, k), osm = bench_median(os, k);
    double a1m = bench_median(a1 + 1, k), anm = bench_median(an + 1, k);
    double o1m = bench_median(o1 + 1, k), onm = bench_median(on + 1, k);
    bench_row* r = bench_row_add("compute_speedup", "5 compute speed-up 1 -> all lanes", "x", asm_, "omp 1 -> all", osm,
                                 BENCH_TARGET_VALUE, BENCH_GE, 1.8);
    bench_row_extra(r, "accel_min_x", as[0]);
    bench_row_extra(r, "accel_max_x", as[k - 1]);
    bench_row_extra(r, "baseline_min_x", os[0]);
    bench_row_extra(r, "baseline_max_x", os[k - 1]);
    free(as); free(os);
    bench_row_extra(r, "accel_1_ms", a1m / 1e6);
    bench_row_extra(r, "accel_all_ms", anm / 1e6);
    bench_row_extra(r, "baseline_1_ms", o1m / 1e6);
    bench_row_extra(r, "baseline_all_ms", onm / 1e6);
    bench_row_extra(r, "threads", nt);
    bench_row_extra(r, "elements", (double)n);
    bench_row_extra(r, "iters_per_element", cfg.compute_iters);
    bench_row_add("compute_time", "5 compute time, all lanes", "ns", anm, "omp all threads", onm, BENCH_TARGET_NONE, BENCH_LE, 0);
    free(a1); free(an); free(o1); free(on);
    compute_dev_close(&one);
    compute_dev_close(&all);
    free(x); free(y);
}

/* ==== figure 7: per-exec overhead of a many-group exec at 2, 4, 8 lanes ==== */
/* An exec of 4096 one-item groups of a near-empty kernel, 100 execs per batch: the cost per exec is
   the kernels' share plus the pool's hand-off and barrier, which issue 11 asks to keep under 1.5 us at
   8 lanes. Baseline: an OpenMP `parallel for` of the same shape (4096 iterations calling the same
   function through a pointer, static schedule, implicit barrier) with as many threads.
   7o, the overhead beyond the kernels: the kernels' share is what OpenMP spends on them, its region's
   time minus an empty region's (`parallel` with its barrier and nothing in it, the same threads); accel's
   overhead is its time per exec minus that share, OpenMP's is the empty region. (The serial loop over
   the 4096 calls divided by the lanes would understate the share: on a VM whose two vCPUs are one
   core's hyperthreads, two threads do not run the calls twice as fast.)
   After the settle sleep each side runs one untimed batch first: the first parallel step after a sleep
   of a VM's CPU costs up to a few ms (the hypervisor has to give the vCPU back), which would otherwise
   land on whichever side came first. Lane counts above the usable cores run oversubscribed ("(over)")
   and are printed for information only; the 1.5 us target applies at every lane count the machine
   has (8 where it has 8 CPUs). */
#define OVERHEAD_GROUPS 4096u
#define OVERHEAD_EXECS 100u
static void k_touch(const accel_dispatch* d) {
    uint32_t* c = (uint32_t*)d->buffers[0];
    if (d->group_id[0] == 0) c[0] += 1;
}
static void (*volatile touch_fn)(const accel_dispatch*) = k_touch;
static double overhead_accel_run(counter_rig* r, uint64_t* value) {
    uint64_t t0 = bench_now_ns();
    for (uint32_t k = 0; k < OVERHEAD_EXECS; k++)
        accel_queue_exec(r->q, r->prog, &r->buf, 1, NULL, 0, accel_exec_1d(OVERHEAD_GROUPS, 1));
    accel_queue_signal(r->q, r->s, ++*value);
    check(accel_queue_submit(r->q), "accel_queue_submit");
    check(accel_signal_wait(r->s, *value, BENCH_WAIT_NS), "accel_signal_wait");
    return (double)(bench_now_ns() - t0) / OVERHEAD_EXECS;
}
/* groups > 0: OVERHEAD_EXECS regions of the exec's shape; 0: as many empty regions. ns per region. */
static double overhead_omp_run(uint32_t* counter, int nt, int groups) {
    accel_dispatch d;
    void* bufs[1] = { counter };
    memset(&d, 0, sizeof d);
    d.buffers = bufs;
    uint64_t t0 = bench_now_ns();
    for (uint32_t k = 0; k < OVERHEAD_EXECS; k++) {
#pragma omp parallel for num_threads(nt) schedule(static) firstprivate(d)
        for (int g = 0; g < groups; g++) { d.group_id[0] = (uint32_t)g; touch_fn(&d); }
    }
    return (double)(bench_now_ns() - t0) / OVERHEAD_EXECS;
}
static void fig_overhead_lanes(uint32_t lanes) {
    accel_device* dev;
    check(accel_device_create(&(accel_device_desc){ .cpu_threads = lanes, .label = "bench overhead" }, &dev), "accel_device_create");
    counter_rig r = counter_rig_open(dev, k_touch);
    uint32_t omp_counter = 0;
    uint64_t value = 0;
    const int R = cfg.rounds + 1;
    double *a = calloc((size_t)R, sizeof(double)), *o = calloc((size_t)R, sizeof(double)), *e = calloc((size_t)R, sizeof(double));
    for (int round = 0; round < R; round++) {
        bench_sleep_ns(BENCH_SETTLE_NS);
        overhead_accel_run(&r, &value);   /* warm-up after the sleep */
        a[round] = overhead_accel_run(&r, &value);
        bench_sleep_ns(BENCH_SETTLE_NS);
        overhead_omp_run(&omp_counter, (int)lanes, (int)OVERHEAD_GROUPS);
        o[round] = overhead_omp_run(&omp_counter, (int)lanes, (int)OVERHEAD_GROUPS);
        e[round] = overhead_omp_run(&omp_counter, (int)lanes, 0);
    }
    if (r.counter[0] != 2u * (uint32_t)R * OVERHEAD_EXECS)
        bench_fail("overhead: %u execs counted, %u run", r.counter[0], 2u * (uint32_t)R * OVERHEAD_EXECS);
    if (omp_counter != 2u * (uint32_t)R * OVERHEAD_EXECS)
        bench_fail("overhead: %u OpenMP regions counted, %u run", omp_counter, 2u * (uint32_t)R * OVERHEAD_EXECS);
    double am = bench_median(a + 1, (size_t)R - 1), om = bench_median(o + 1, (size_t)R - 1), em = bench_median(e + 1, (size_t)R - 1);
    double share = om > em ? om - em : 0;
    bool over = lanes > cfg.threads;
    char fig[32], title[48];
    snprintf(fig, sizeof fig, "exec_overhead_%u", lanes);
    snprintf(title, sizeof title, "7 exec 4096 groups, %u lanes%s", lanes, over ? " (over)" : "");
    bench_row* row = bench_row_add(fig, title, "ns", am, "omp parallel for", om, BENCH_TARGET_NONE, BENCH_LE, 0);
    bench_row_extra(row, "lanes", lanes);
    bench_row_extra(row, "oversubscribed", over);
    if (!over) {   /* oversubscribed, the OpenMP region says nothing about the kernels' share */
        snprintf(fig, sizeof fig, "exec_overhead_beyond_%u", lanes);
        snprintf(title, sizeof title, "7o overhead beyond kernels, %u lanes", lanes);
        row = bench_row_add(fig, title, "ns", am - share, "omp empty region", em, BENCH_TARGET_VALUE, BENCH_LE, 1500.0);
        bench_row_extra(row, "lanes", lanes);
        bench_row_extra(row, "kernels_ns", share);
    }
    free(a); free(o); free(e);
    counter_rig_close(&r);
    accel_device_destroy(dev);
}
static void fig_overhead(void) {
    static const uint32_t lanes[3] = { 2, 4, 8 };
    for (int i = 0; i < 3; i++) fig_overhead_lanes(lanes[i]);
}

/* ==== figure 9: task systems: accel beside oneTBB and OpenMP ==== */
/* Three shapes a user of a task system runs, each side with its own idiom, rounds interleaved:
   9a a chain of dependent tiny tasks, per task (accel: one-group execs in one batch of one queue;
      oneTBB: each task spawns its successor in a task_group; OpenMP: tasks with depend(inout));
   9b a fork-join over 4096 items (accel: one exec of 16 groups of 256; oneTBB: parallel_for in blocks
      of 256; OpenMP: parallel for, chunks of 256);
   9c the host submits one tiny task and waits for it (accel: exec + signal, submit, signal wait
      without a timeout, which may run the batch itself; oneTBB: task_group run + wait, likewise;
      OpenMP: a fork-join region), mean and median of every sample. */
#if defined(BENCH_HAVE_TBB)
int bench_tbb_init(int threads);
void bench_tbb_fini(void);
void bench_tbb_chain(uint32_t n, volatile uint32_t* counter);
void bench_tbb_fork_join(uint32_t items, uint32_t grain, uint32_t* marks);
void bench_tbb_round_trips(uint32_t n, volatile uint32_t* counter, double* times, uint64_t (*clock)(void));
#endif
#define TASKS_ITEMS 4096u
#define TASKS_GRAIN 256u
static void k_mark_items(const accel_dispatch* d) {
    uint32_t* m = (uint32_t*)d->buffers[0];
    uint32_t i0 = d->group_id[0] * d->group_size[0];
    for (uint32_t i = i0; i < i0 + d->group_size[0] && i < d->global_size[0]; i++) m[i] += 1;
}
static uint64_t tasks_clock(void) { return bench_now_ns(); }
static double tasks_mean(const double* v, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += v[i];
    return n ? s / (double)n : 0;
}
typedef struct tasks_side { double* chain; double* fork; double* trip; size_t trips; } tasks_side;
static tasks_side tasks_side_new(int rounds, uint32_t trips) {
    tasks_side s;
    s.chain = calloc((size_t)rounds, sizeof(double));
    s.fork = calloc((size_t)rounds * 64, sizeof(double));
    s.trip = calloc((size_t)rounds * trips, sizeof(double));
    s.trips = 0;
    if (!s.chain || !s.fork || !s.trip) { fprintf(stderr, "bench: out of memory\n"); exit(2); }
    return s;
}
static void tasks_side_free(tasks_side* s) { free(s->chain); free(s->fork); free(s->trip); }

typedef struct tasks_rig { counter_rig count; accel_buffer* marks; accel_program* mark; uint32_t* m; } tasks_rig;
static void tasks_accel_round(tasks_rig* r, tasks_side* s, int round, uint32_t chain, uint32_t trips, uint64_t* value) {
    uint64_t t0 = bench_now_ns();
    for (uint32_t i = 0; i < chain; i++) accel_queue_exec(r->count.q, r->count.prog, &r->count.buf, 1, NULL, 0, accel_exec_1d(1, 1));
    accel_queue_signal(r->count.q, r->count.s, ++*value);
    check(accel_queue_submit(r->count.q), "accel_queue_submit");
    check(accel_signal_wait(r->count.s, *value, ACCEL_WAIT_FOREVER), "accel_signal_wait");
    s->chain[round] = (double)(bench_now_ns() - t0) / chain;
    for (int k = 0; k < 64; k++) {
        t0 = bench_now_ns();
        accel_queue_exec(r->count.q, r->mark, &r->marks, 1, NULL, 0, accel_exec_1d(TASKS_ITEMS, TASKS_GRAIN));
        accel_queue_signal(r->count.q, r->count.s, ++*value);
        check(accel_queue_submit(r->count.q), "accel_queue_submit");
        check(accel_signal_wait(r->count.s, *value, ACCEL_WAIT_FOREVER), "accel_signal_wait");
        s->fork[round * 64 + k] = (double)(bench_now_ns() - t0);
    }
    for (uint32_t i = 0; i < trips; i++) {
        t0 = bench_now_ns();
        accel_queue_exec(r->count.q, r->count.prog, &r->count.buf, 1, NULL, 0, accel_exec_1d(1, 1));
        accel_queue_signal(r->count.q, r->count.s, ++*value);
        check(accel_queue_submit(r->count.q), "accel_queue_submit");
        check(accel_signal_wait(r->count.s, *value, ACCEL_WAIT_FOREVER), "accel_signal_wait");
        s->trip[s->trips++] = (double)(bench_now_ns() - t0);
    }
}
static volatile uint32_t tasks_omp_count[16];
static uint32_t tasks_omp_marks[TASKS_ITEMS];
static void tasks_omp_round(tasks_side* s, int round, uint32_t chain, uint32_t trips, int nt) {
    uint64_t t0 = bench_now_ns();
#pragma omp parallel num_threads(nt)
#pragma omp single
    for (uint32_t i = 0; i < chain; i++) {
#pragma omp task depend(inout: tasks_omp_count[0])
        tasks_omp_count[0] += 1;
    }
    s->chain[round] = (double)(bench_now_ns() - t0) / chain;
    for (int k = 0; k < 64; k++) {
        t0 = bench_now_ns();
#pragma omp parallel for num_threads(nt) schedule(static, TASKS_GRAIN)
        for (uint32_t i = 0; i < TASKS_ITEMS; i++) tasks_omp_marks[i] += 1;
        s->fork[round * 64 + k] = (double)(bench_now_ns() - t0);
    }
    for (uint32_t i = 0; i < trips; i++) {
        t0 = bench_now_ns();
#pragma omp parallel num_threads(nt)
#pragma omp single nowait
        tasks_omp_count[1] += 1;
        s->trip[s->trips++] = (double)(bench_now_ns() - t0);
    }
}
#if defined(BENCH_HAVE_TBB)
static volatile uint32_t tasks_tbb_count[2];
static uint32_t tasks_tbb_marks[TASKS_ITEMS];
static void tasks_tbb_round(tasks_side* s, int round, uint32_t chain, uint32_t trips) {
    uint64_t t0 = bench_now_ns();
    bench_tbb_chain(chain, &tasks_tbb_count[0]);
    s->chain[round] = (double)(bench_now_ns() - t0) / chain;
    for (int k = 0; k < 64; k++) {
        t0 = bench_now_ns();
        bench_tbb_fork_join(TASKS_ITEMS, TASKS_GRAIN, tasks_tbb_marks);
        s->fork[round * 64 + k] = (double)(bench_now_ns() - t0);
    }
    bench_tbb_round_trips(trips, &tasks_tbb_count[1], s->trip + s->trips, tasks_clock);
    s->trips += trips;
}
#endif
/* Every item of every fork-join marked once per run, every tiny task counted once. */
static void tasks_check(const char* who, const uint32_t* marks, uint32_t runs, uint64_t count, uint64_t want) {
    for (uint32_t i = 0; i < TASKS_ITEMS; i++)
        if (marks[i] != runs) { bench_fail("tasks (%s): item %u marked %u times, expected %u", who, i, marks[i], runs); return; }
    if (count != want) bench_fail("tasks (%s): %llu tiny tasks ran, expected %llu", who, (unsigned long long)count, (unsigned long long)want);
}
static void tasks_rows(const char* base, const char* base_name, tasks_side* a, tasks_side* o, int R, double trip_target) {
    char fig[48], title[80];
    size_t nf = (size_t)R * 64;
    double am = bench_median(a->chain, (size_t)R), om = bench_median(o->chain, (size_t)R);
    snprintf(fig, sizeof fig, "tasks_chain_vs_%s", base);
    snprintf(title, sizeof title, "9a chain of tiny tasks, per task, vs %s", base_name);
    bench_row_add(fig, title, "ns", am, base_name, om, BENCH_TARGET_RATIO, BENCH_LE, 1.0);
    snprintf(fig, sizeof fig, "tasks_fork_join_vs_%s", base);
    snprintf(title, sizeof title, "9b fork-join over 4096 items vs %s", base_name);
    bench_row_add(fig, title, "ns", bench_median(a->fork, nf), base_name, bench_median(o->fork, nf), BENCH_TARGET_RATIO,
                  BENCH_LE, 1.0);
    snprintf(fig, sizeof fig, "tasks_round_trip_mean_vs_%s", base);
    snprintf(title, sizeof title, "9c submit one tiny task + wait, mean, vs %s", base_name);
    bench_row* r = bench_row_add(fig, title, "ns", tasks_mean(a->trip, a->trips), base_name, tasks_mean(o->trip, o->trips),
                                 BENCH_TARGET_RATIO, BENCH_LE, trip_target);
    bench_row_extra(r, "accel_median_ns", bench_median(a->trip, a->trips));
    bench_row_extra(r, "baseline_median_ns", bench_median(o->trip, o->trips));
    bench_row_extra(r, "samples", (double)a->trips);
}
static void fig_tasks(accel_device* dev) {
    const int R = cfg.rounds;
    const uint32_t chain = cfg.quick ? 2000 : 20000, trips = cfg.quick ? 200 : 2000 / (uint32_t)R + 1;
    int nt = (int)cfg.threads;
    tasks_rig r;
    uint64_t value = 0;
    tasks_side a = tasks_side_new(R, trips), o = tasks_side_new(R, trips);
    r.count = counter_rig_open(dev, k_count);
    check(accel_buffer_create(dev, &(accel_buffer_desc){ .size = TASKS_ITEMS * 4 }, &r.marks), "accel_buffer_create");
    check(accel_program_create(dev, &(accel_program_desc){ .name = "mark items", .cpu = k_mark_items, .buffer_count = 1 },
                               &r.mark), "accel_program_create");
    r.m = (uint32_t*)accel_buffer_map(r.marks);
    memset(r.m, 0, TASKS_ITEMS * 4);
    r.count.counter[0] = 0;
#if defined(BENCH_HAVE_TBB)
    tasks_side t = tasks_side_new(R, trips);
    if (!bench_tbb_init(nt)) { fprintf(stderr, "bench: oneTBB arena failed\n"); exit(2); }
#endif
    for (int round = 0; round < R; round++) {
        bench_sleep_ns(BENCH_SETTLE_NS);
        tasks_accel_round(&r, &a, round, chain, trips, &value);
        bench_sleep_ns(BENCH_SETTLE_NS);
        tasks_omp_round(&o, round, chain, trips, nt);
#if defined(BENCH_HAVE_TBB)
        bench_sleep_ns(BENCH_SETTLE_NS);
        tasks_tbb_round(&t, round, chain, trips);
#endif
    }
    tasks_check("accel", r.m, (uint32_t)R * 64, r.count.counter[0], (uint64_t)R * (chain + trips));
    tasks_check("OpenMP", tasks_omp_marks, (uint32_t)R * 64, tasks_omp_count[0] + tasks_omp_count[1], (uint64_t)R * (chain + trips));
#if defined(BENCH_HAVE_TBB)
    tasks_check("oneTBB", tasks_tbb_marks, (uint32_t)R * 64, tasks_tbb_count[0] + tasks_tbb_count[1], (uint64_t)R * (chain + trips));
    tasks_rows("tbb", "oneTBB", &a, &t, R, 1.5);
    bench_tbb_fini();
    tasks_side_free(&t);
#else
    printf("9 oneTBB: not built in (install libtbb-dev; make bench builds it in where present)\n");
#endif
    tasks_rows("omp", "OpenMP", &a, &o, R, 0.5);
    tasks_side_free(&a);
    tasks_side_free(&o);
    accel_program_destroy(r.mark);
    accel_buffer_destroy(r.marks);
    counter_rig_close(&r.count);
}

/* ==== figure 6: CPU burned by an idle device ==== */
typedef struct idle_result { double accel_pct, base_pct; } idle_result;

static double idle_measure(void) {
    uint64_t c0 = bench_process_cpu_ns(), t0 = bench_now_ns();
    bench_sleep_ns(cfg.idle_ns);
    uint64_t c1 = bench_process_cpu_ns(), t1 = bench_now_ns();
    return 100.0 * (double)(c1 - c0) / (double)(t1 - t0);
}

/* Runs before OpenMP has started a thread. Baseline and device measurements alternate. */
static idle_result fig_idle(void) {
    int R = cfg.quick ? 1 : 2;
    double a[2], b[2];
    for (int round = 0; round < R; round++) {
        bench_sleep_ns(BENCH_SETTLE_NS);
        b[round] = idle_measure();

        accel_device* dev;
        accel_queue* q;
        accel_signal* s;
        accel_buffer* buf;
        accel_program* prog;
        check(accel_device_create(&(accel_device_desc){ .cpu_threads = cfg.threads, .label = "bench idle" }, &dev), "accel_device_create");
        check(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q), "accel_queue_create");
        check(accel_signal_create(dev, 0, &s), "accel_signal_create");
        check(accel_buffer_create(dev, &(accel_buffer_desc){ .size = 64 }, &buf), "accel_buffer_create");
        check(accel_program_create(dev, &(accel_program_desc){ .name = "mark", .cpu = k_mark, .buffer_count = 1 }, &prog),
              "accel_program_create");
        /* one submit that wakes the whole pool (more groups than the inline limit), so every thread exists and has run */
        accel_queue_exec(q, prog, &buf, 1, NULL, 0, accel_exec_1d(16, 1));
        accel_queue_signal(q, s, 1);
        check(accel_queue_submit(q), "accel_queue_submit");
        check(accel_signal_wait(s, 1, BENCH_WAIT_NS), "accel_signal_wait");
        /* measured right away: the bounded spin after the work is part of what an idle device costs */
        a[round] = idle_measure();
        const uint32_t* slots = (const uint32_t*)accel_buffer_map(buf);
        for (uint32_t g = 0; g < 16; g++)
            if (!slots || slots[g] != g + 1) { bench_fail("idle: group %u of the warm-up exec did not run", g); break; }
        accel_program_destroy(prog);
        accel_buffer_destroy(buf);
        accel_signal_destroy(s);
        accel_queue_destroy(q);
        accel_device_destroy(dev);
    }
    idle_result r;
    r.accel_pct = R == 1 ? a[0] : (a[0] > a[1] ? a[0] : a[1]);   /* worst of the rounds */
    r.base_pct = R == 1 ? b[0] : (b[0] > b[1] ? b[0] : b[1]);
    return r;
}

/* ==== main ==== */
static bool want(const char* figure) { return !cfg.only || strstr(cfg.only, figure) != NULL; }

static uint32_t usable_cores(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return (uint32_t)CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (uint32_t)n : 1;
}

int main(int argc, char** argv) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) cfg.quick = true;
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) cfg.only = argv[++i];
        else {
            printf("usage: %s [--quick] [--only pingpong|latency|trace|batch|saxpy|compute|idle|overhead|replay|tasks|indirect|qmem]\n"
                   "  --quick  short run (smaller sizes, fewer rounds) for CI smoke checks\n"
                   "  --only   run those figures only, comma-separated (e.g. tasks,qmem: one after another, as\n"
                   "           in a full run; one, for profiling it under perf)\n", argv[0]);
            return strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0 ? 0 : 2;
        }
    }
    cfg.threads = usable_cores();
    if (cfg.quick) {
        cfg.rounds = 3; cfg.pingpong_iters = 2000; cfg.latency_iters = 100; cfg.batch_cmds = 10000;
        cfg.saxpy_n = (size_t)4 << 20; cfg.compute_n = 1u << 16; cfg.compute_iters = 256; cfg.idle_ns = 250000000ull;
    } else {
        cfg.rounds = 7; cfg.pingpong_iters = 20000; cfg.latency_iters = 300; cfg.batch_cmds = 10000;
        cfg.saxpy_n = (size_t)16 << 20; cfg.compute_n = 1u << 18; cfg.compute_iters = 256; cfg.idle_ns = 1000000000ull;
    }
    omp_set_dynamic(0);
    omp_set_num_threads((int)cfg.threads);

    uint64_t start = bench_now_ns();
    printf("accel %d.%d.%d CPU benchmark%s: %u cores, device lanes = OpenMP threads = %u, spin %llu ns, %d rounds\n",
           ACCEL_VERSION_MAJOR, ACCEL_VERSION_MINOR, ACCEL_VERSION_PATCH, cfg.quick ? " (--quick)" : "", cfg.threads,
           cfg.threads, (unsigned long long)BENCH_SPIN_NS, cfg.rounds);
    fflush(stdout);

    idle_result idle = { 0, 0 };
    if (want("idle")) { printf("6 idle CPU ...\n"); fflush(stdout); idle = fig_idle(); }

    accel_device* dev;
    check(accel_device_create(&(accel_device_desc){ .cpu_threads = cfg.threads, .label = "bench" }, &dev), "accel_device_create");
    accel_device_info info;
    check(accel_device_info_get(dev, &info), "accel_device_info_get");
    printf("device: %s\n", info.name);
    if (want("pingpong")) { printf("1 ping-pong ...\n"); fflush(stdout); fig_pingpong(dev); }
    if (want("latency")) { printf("2 exec latency ...\n"); fflush(stdout); fig_exec_latency(dev); }
    if (want("batch")) { printf("3 batch ...\n"); fflush(stdout); fig_batch(dev); }
    if (want("saxpy")) { printf("4 saxpy ...\n"); fflush(stdout); fig_saxpy(dev); }
    if (want("replay")) { printf("8 replay ...\n"); fflush(stdout); fig_replay(dev); }
    if (want("tasks")) { printf("9 task systems ...\n"); fflush(stdout); fig_tasks(dev); }
    if (want("indirect")) { printf("10 indirect exec ...\n"); fflush(stdout); fig_indirect(dev); }
    if (want("qmem")) { printf("11 queue memory ...\n"); fflush(stdout); fig_qmem(dev); }
    accel_device_destroy(dev);
    if (want("trace")) { printf("2t traced exec latency ...\n"); fflush(stdout); fig_trace_latency(); }
    if (want("compute")) { printf("5 compute ...\n"); fflush(stdout); fig_compute(); }
    if (want("overhead")) { printf("7 exec overhead ...\n"); fflush(stdout); fig_overhead(); }

    if (want("idle")) {
        bench_row* r = bench_row_add("idle_cpu", "6 idle device CPU, % of one core", "%", idle.accel_pct, "no device",
                                     idle.base_pct, BENCH_TARGET_VALUE, BENCH_LT, 1.0);
        r->has_ratio = false;
        bench_row_extra(r, "seconds", (double)cfg.idle_ns / 1e9);
    }

    char heading[160];
    snprintf(heading, sizeof heading, "accel CPU backend vs raw baselines (%u threads%s, %.1f s)", cfg.threads,
             cfg.quick ? ", --quick" : "", (double)(bench_now_ns() - start) / 1e9);
    int missed = bench_report(heading);
    printf("%d target(s) missed, %d verification failure(s)\n", missed, bench_failures());
    return bench_failures() ? 1 : 0;
}
