/* bench/bench.h — timing, statistics and report helpers shared by the accel benchmarks
   (bench/cpu.c, and later bench/vulkan.c and bench/cuda.c). Header-only, everything static inline.

   A benchmark measures each figure next to a raw baseline it implements itself, in the same run,
   interleaving the two sides (A B A B ...) and taking the median of each side. It then adds one row
   per figure with bench_row_add() and calls bench_report() at the end, which prints

       figure | accel | baseline | ratio | target | met/MISSED

   followed by one machine-readable line per row:

       BENCH {"figure":"pingpong","accel_ns":...,"baseline":"futex","baseline_ns":...,"ratio":...,
              "target":"<=2.0","met":true}

   A figure measured as paired samples (a latency, or a time per step) can use bench_pair_run: rounds
   alternate the two sides, each round a block of samples of one side (the side that goes first
   alternates), and it also counts the wake-ups (voluntary context switches, from /proc) of the threads
   it is told to watch (bench_threads_started: the threads a call such as accel_queue_create started).

   Linux/POSIX only (CLOCK_MONOTONIC, nanosleep, getrusage, /proc/self/task). */
#ifndef ACCEL_BENCH_H_INCLUDED
#define ACCEL_BENCH_H_INCLUDED

#if !defined(_GNU_SOURCE)
#  define _GNU_SOURCE 1
#endif
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/types.h>

/* ==== time ==== */
static inline uint64_t bench_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void bench_sleep_ns(uint64_t ns) {
    struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
    while (nanosleep(&ts, &ts) != 0) { /* EINTR: sleep the rest */ }
}

/* user + system CPU time of the whole process (all threads), ns */
static inline uint64_t bench_process_cpu_ns(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ull +
           ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ull;
}

/* a spin-loop hint */
static inline void bench_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield");
#endif
}

/* ==== statistics ==== */
static inline int bench_i_cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}
/* median of v[0..n-1]; sorts v in place. 0 for n == 0. */
static inline double bench_median(double* v, size_t n) {
    if (n == 0) return 0.0;
    qsort(v, n, sizeof *v, bench_i_cmp_double);
    return (n & 1) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
/* p-quantile (0..1) of an already sorted v */
static inline double bench_quantile_sorted(const double* v, size_t n, double p) {
    if (n == 0) return 0.0;
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return v[i < n ? i : n - 1];
}

/* ==== threads: who wakes ==== */
#define BENCH_MAX_THREADS 16
typedef struct bench_threads { pid_t tid[BENCH_MAX_THREADS]; int count; } bench_threads;
/* The process's threads (at most max), from /proc/self/task; 0 where there is no /proc. */
static inline int bench_i_task_list(pid_t* out, int max) {
    DIR* d = opendir("/proc/self/task");
    struct dirent* e;
    int n = 0;
    if (!d) return 0;
    while ((e = readdir(d)) != NULL && n < max)
        if (e->d_name[0] != '.') out[n++] = (pid_t)atoi(e->d_name);
    closedir(d);
    return n;
}
/* Voluntary context switches of a thread so far (each a sleep, so a later wake-up); 0 when it is gone. */
static inline uint64_t bench_i_task_wakeups(pid_t tid) {
    char path[64], line[128];
    uint64_t v = 0;
    FILE* f;
    snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)tid);
    if ((f = fopen(path, "r")) == NULL) return 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "voluntary_ctxt_switches:", 24) == 0) v = strtoull(line + 24, NULL, 10);
    fclose(f);
    return v;
}
/* Wake-ups so far of the watched threads (NULL: every thread of the process). */
static inline uint64_t bench_threads_wakeups(const bench_threads* t) {
    pid_t all[256];
    uint64_t v = 0;
    int n = t ? t->count : bench_i_task_list(all, 256);
    for (int i = 0; i < n; i++) v += bench_i_task_wakeups(t ? t->tid[i] : all[i]);
    return v;
}
/* Call with before = NULL to snapshot the threads into *snap; then again after the call that starts
   threads with before = snap: the threads that are new are appended to *out. */
typedef struct bench_threads_snapshot { pid_t tid[256]; int count; } bench_threads_snapshot;
static inline void bench_threads_started(bench_threads_snapshot* snap, const bench_threads_snapshot* before, bench_threads* out) {
    snap->count = bench_i_task_list(snap->tid, 256);
    if (!before) return;
    for (int i = 0; i < snap->count; i++) {
        bool old = false;
        for (int j = 0; j < before->count && !old; j++) old = snap->tid[i] == before->tid[j];
        if (!old && out->count < BENCH_MAX_THREADS) out->tid[out->count++] = snap->tid[i];
    }
}
/* t without tests/mock_cuda.c's stream threads (named "mock-stream": they are the mock's "GPU", not
   accel's threads). */
static inline void bench_threads_not_mock(const bench_threads* t, bench_threads* out) {
    out->count = 0;
    for (int i = 0; i < t->count; i++) {
        char path[64], comm[32] = "";
        FILE* f;
        snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)t->tid[i]);
        if ((f = fopen(path, "r")) != NULL) {
            if (!fgets(comm, sizeof comm, f)) comm[0] = '\0';
            fclose(f);
        }
        if (strncmp(comm, "mock-stream", 11) != 0) out->tid[out->count++] = t->tid[i];
    }
}

/* ==== failures ==== */
static int bench_i_failures;
/* Records a failed verification (the run then exits non-zero) and prints why. */
static inline void bench_fail(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "bench: FAILED: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    bench_i_failures++;
}
static inline int bench_failures(void) { return bench_i_failures; }

/* ==== paired samples ==== */
#define BENCH_COUNTS 6                /* counters a bench_count_fn reads */
typedef struct bench_pair {
    double accel, baseline;          /* medians of all samples of each side */
    double paired;                   /* median over rounds of (accel median / baseline median) of the round */
    double watched_wakeups;          /* wake-ups of the watched threads per accel sample */
    double accel_process_wakeups, baseline_process_wakeups;   /* every thread's, per sample of each side */
    double counts[2][BENCH_COUNTS];  /* bench_pair_run_counted: the counters' growth per sample, per side */
} bench_pair;
/* Reads a bench's own counters (driver calls, wake-ups of chosen threads, ...) into out[0..BENCH_COUNTS - 1]:
   bench_pair_run_counted zeroes them first. */
typedef void (*bench_count_fn)(void* ctx, double out[BENCH_COUNTS]);
#define BENCH_PAIR_MAX_ROUNDS 64
/* Runs 1 + per_round / 4 warm-up samples per side, then `rounds` rounds (at most 64) of per_round
   samples of each side; sample(ctx, 0) runs an accel sample, sample(ctx, 1) a baseline one, and returns
   its figure. Wake-ups are read around each block, outside the samples; so is count(ctx, c) when not
   NULL, and out->counts[side] gets the counters' growth per sample of that side. */
static inline void bench_pair_run_counted(int rounds, int per_round, double (*sample)(void* ctx, int side), void* ctx,
                                          const bench_threads* watch, bench_count_fn count, bench_pair* out) {
    int n = per_round * rounds;
    double* x[2] = { (double*)calloc((size_t)n, sizeof(double)), (double*)calloc((size_t)n, sizeof(double)) };
    double* tmp = (double*)calloc((size_t)per_round, sizeof(double));
    double paired[BENCH_PAIR_MAX_ROUNDS], med[2] = { 0, 0 };
    uint64_t watched = 0, proc[2] = { 0, 0 };
    double counts[2][BENCH_COUNTS];
    memset(out, 0, sizeof *out);
    memset(counts, 0, sizeof counts);
    if (!x[0] || !x[1] || !tmp || rounds > BENCH_PAIR_MAX_ROUNDS) { bench_fail("bench_pair_run: out of memory or too many rounds"); goto out; }
    for (int i = 0; i < 1 + per_round / 4; i++) { sample(ctx, 0); sample(ctx, 1); }
    for (int k = 0; k < rounds; k++) {
        for (int o = 0; o < 2; o++) {
            int side = (k + o) & 1;
            double* v = x[side] + (size_t)k * (size_t)per_round;
            uint64_t w0 = side == 0 && watch ? bench_threads_wakeups(watch) : 0, p0 = bench_threads_wakeups(NULL);
            double c0[BENCH_COUNTS] = { 0 }, c1[BENCH_COUNTS] = { 0 };
            if (count) count(ctx, c0);
            for (int i = 0; i < per_round; i++) v[i] = sample(ctx, side);
            if (count) count(ctx, c1);
            for (int j = 0; j < BENCH_COUNTS; j++) counts[side][j] += c1[j] - c0[j];
            proc[side] += bench_threads_wakeups(NULL) - p0;
            if (side == 0 && watch) watched += bench_threads_wakeups(watch) - w0;
            memcpy(tmp, v, (size_t)per_round * sizeof *tmp);
            med[side] = bench_median(tmp, (size_t)per_round);
        }
        paired[k] = med[1] > 0 ? med[0] / med[1] : 0;
    }
    out->accel = bench_median(x[0], (size_t)n);
    out->baseline = bench_median(x[1], (size_t)n);
    out->paired = bench_median(paired, (size_t)rounds);
    out->watched_wakeups = (double)watched / n;
    out->accel_process_wakeups = (double)proc[0] / n;
    out->baseline_process_wakeups = (double)proc[1] / n;
    for (int side = 0; side < 2; side++)
        for (int j = 0; j < BENCH_COUNTS; j++) out->counts[side][j] = counts[side][j] / n;
out:
    free(x[0]); free(x[1]); free(tmp);
}
static inline void bench_pair_run(int rounds, int per_round, double (*sample)(void* ctx, int side), void* ctx,
                                  const bench_threads* watch, bench_pair* out) {
    bench_pair_run_counted(rounds, per_round, sample, ctx, watch, NULL, out);
}

/* ==== report ==== */
typedef enum bench_target_kind {
    BENCH_TARGET_NONE,     /* informational row: no target */
    BENCH_TARGET_RATIO,    /* the target applies to the ratio accel/baseline */
    BENCH_TARGET_VALUE     /* the target applies to the accel figure itself */
} bench_target_kind;
typedef enum bench_target_op { BENCH_LE, BENCH_LT, BENCH_GE, BENCH_GT } bench_target_op;

typedef struct bench_row {
    char figure[40];       /* machine name: "pingpong" */
    char title[48];        /* human name for the table */
    char unit[8];          /* "ns", "GB/s", "x", "%": also the JSON key suffix */
    double accel, baseline, ratio;
    bool has_ratio;
    char baseline_name[32];
    bench_target_kind kind;
    bench_target_op op;
    double threshold;
    bool met;
    char extra[1280];      /* extra JSON members, e.g. "\"accel_p90_ns\":123" (no leading comma) */
} bench_row;

#define BENCH_MAX_ROWS 32
static bench_row bench_i_rows[BENCH_MAX_ROWS];
static int bench_i_row_count;

static inline const char* bench_i_op_text(bench_target_op op) {
    switch (op) {
    case BENCH_LE: return "<=";
    case BENCH_LT: return "<";
    case BENCH_GE: return ">=";
    default:       return ">";
    }
}
static inline bool bench_i_op_holds(bench_target_op op, double v, double t) {
    switch (op) {
    case BENCH_LE: return v <= t;
    case BENCH_LT: return v < t;
    case BENCH_GE: return v >= t;
    default:       return v > t;
    }
}
/* JSON key suffix for a unit: "ns" -> "ns", "GB/s" -> "gbps", "x" -> "x", "%" -> "pct", "/s" -> "per_s",
   "/step" -> "per_step" */
static inline const char* bench_i_unit_key(const char* unit) {
    if (strcmp(unit, "GB/s") == 0) return "gbps";
    if (strcmp(unit, "%") == 0) return "pct";
    if (strcmp(unit, "/s") == 0) return "per_s";
    if (strcmp(unit, "/step") == 0) return "per_step";
    return unit;
}

/* Adds a row. ratio = accel / baseline (when baseline != 0). The target (when kind != NONE) is checked
   against the ratio (RATIO) or the accel figure (VALUE). Returns the row for extra fields. */
static inline bench_row* bench_row_add(const char* figure, const char* title, const char* unit,
                                       double accel, const char* baseline_name, double baseline,
                                       bench_target_kind kind, bench_target_op op, double threshold) {
    if (bench_i_row_count >= BENCH_MAX_ROWS) { bench_fail("too many report rows"); return &bench_i_rows[0]; }
    bench_row* r = &bench_i_rows[bench_i_row_count++];
    memset(r, 0, sizeof *r);
    snprintf(r->figure, sizeof r->figure, "%s", figure);
    snprintf(r->title, sizeof r->title, "%s", title);
    snprintf(r->unit, sizeof r->unit, "%s", unit);
    snprintf(r->baseline_name, sizeof r->baseline_name, "%s", baseline_name);
    r->accel = accel;
    r->baseline = baseline;
    r->has_ratio = baseline != 0.0;
    r->ratio = r->has_ratio ? accel / baseline : 0.0;
    r->kind = kind;
    r->op = op;
    r->threshold = threshold;
    if (kind == BENCH_TARGET_RATIO) r->met = r->has_ratio && bench_i_op_holds(op, r->ratio, threshold);
    else if (kind == BENCH_TARGET_VALUE) r->met = bench_i_op_holds(op, accel, threshold);
    return r;
}
/* Appends one extra JSON member ("key":number) to a row. */
static inline void bench_row_extra(bench_row* r, const char* key, double value) {
    size_t len = strlen(r->extra);
    snprintf(r->extra + len, sizeof r->extra - len, "%s\"%s\":%.6g", len ? "," : "", key, value);
}

static inline void bench_i_format_value(char* out, size_t size, double v, const char* unit) {
    if (strcmp(unit, "ns") == 0) {
        if (v >= 1e6) snprintf(out, size, "%.2f ms", v / 1e6);
        else if (v >= 1e4) snprintf(out, size, "%.1f us", v / 1e3);
        else snprintf(out, size, "%.0f ns", v);
    } else if (strcmp(unit, "x") == 0) {
        snprintf(out, size, "%.2fx", v);
    } else if (strcmp(unit, "%") == 0) {
        snprintf(out, size, "%.3f%%", v);
    } else {
        snprintf(out, size, "%.2f %s", v, unit);
    }
}
static inline void bench_i_target_text(const bench_row* r, char* out, size_t size) {
    if (r->kind == BENCH_TARGET_NONE) { snprintf(out, size, "-"); return; }
    snprintf(out, size, "%s%g%s%s", bench_i_op_text(r->op), r->threshold,
             r->kind == BENCH_TARGET_VALUE && strcmp(r->unit, "%") == 0 ? "%" : "",
             r->kind == BENCH_TARGET_RATIO ? " (ratio)" : "");
}

/* Prints the table and the BENCH lines. Returns the number of missed targets. */
static inline int bench_report(const char* heading) {
    int missed = 0;
    printf("\n%s\n", heading);
    printf("%-34s | %-12s | %-22s | %-8s | %-14s | %s\n", "figure", "accel", "baseline", "ratio", "target", "met/MISSED");
    printf("%.*s\n", 112, "----------------------------------------------------------------------------------------------------------------");
    for (int i = 0; i < bench_i_row_count; i++) {
        const bench_row* r = &bench_i_rows[i];
        char a[32], b[32], bl[48], ratio[16], target[32];
        bench_i_format_value(a, sizeof a, r->accel, r->unit);
        bench_i_format_value(b, sizeof b, r->baseline, r->unit);
        snprintf(bl, sizeof bl, "%s %s", b, r->baseline_name);
        if (r->has_ratio) snprintf(ratio, sizeof ratio, "%.2f", r->ratio); else snprintf(ratio, sizeof ratio, "-");
        bench_i_target_text(r, target, sizeof target);
        const char* verdict = r->kind == BENCH_TARGET_NONE ? "(info)" : r->met ? "met" : "MISSED";
        if (r->kind != BENCH_TARGET_NONE && !r->met) missed++;
        printf("%-34s | %-12s | %-22s | %-8s | %-14s | %s\n", r->title, a, bl, ratio, target, verdict);
    }
    printf("\n");
    for (int i = 0; i < bench_i_row_count; i++) {
        const bench_row* r = &bench_i_rows[i];
        const char* uk = bench_i_unit_key(r->unit);
        char target[32];
        if (r->kind == BENCH_TARGET_NONE) snprintf(target, sizeof target, "none");
        else snprintf(target, sizeof target, "%s%g", bench_i_op_text(r->op), r->threshold);
        printf("BENCH {\"figure\":\"%s\",\"accel_%s\":%.6g,\"baseline\":\"%s\",\"baseline_%s\":%.6g,",
               r->figure, uk, r->accel, r->baseline_name, uk, r->baseline);
        if (r->has_ratio) printf("\"ratio\":%.4g,", r->ratio); else printf("\"ratio\":null,");
        printf("\"target\":\"%s\",\"target_on\":\"%s\",", target,
               r->kind == BENCH_TARGET_RATIO ? "ratio" : r->kind == BENCH_TARGET_VALUE ? "accel" : "none");
        if (r->kind == BENCH_TARGET_NONE) printf("\"met\":null"); else printf("\"met\":%s", r->met ? "true" : "false");
        if (r->extra[0]) printf(",%s", r->extra);
        printf("}\n");
    }
    fflush(stdout);
    return missed;
}

#endif /* ACCEL_BENCH_H_INCLUDED */
