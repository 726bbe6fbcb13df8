/* bench/devices.c — peer copies (accel_queue_copy with a buffer of another device, DESIGN 7.2) next to
   what a program does without them, in one run, 64 MiB each, GB/s (median of RUNS):

     1 CPU queue, another CPU device's buffer     (direct: memmove)        | raw memcpy
     2 Vulkan queue, within its device            (vkCmdCopyBuffer: the device's own copy, a reference)
     3 Vulkan queue, a CPU device's buffer        (direct: the Vulkan buffer written from host memory)
                                                                            | accel_buffer_write
     4 CPU queue, a Vulkan device's buffer        (direct: read into host memory) | accel_buffer_read
     5 Vulkan queue, another Vulkan device's buffer (direct: its memory imported, vkCmdCopyBuffer)
                                                                            | read + write through the host
     6 the same, ACCEL_VULKAN_NO_EXTERNAL_MEMORY=1, both mapped (staged on the queue's worker: memmove)
                                                                            | read + write through the host
     7 the same with ACCEL_VULKAN_NO_MAP_DEVICE=1 too (staged through the queue's two slots, 4 MiB
       chunks, double-buffered: core: several devices, the staged pipeline)
                                              | the same double-buffered: two host buffers, a thread
                                                reading chunk k + 1 while another writes chunk k
   and the factor imported (5) / staged (6, 7), in time. Rows 2-7 need the Vulkan backend (built with
   -DBENCH_HAVE_VULKAN; lavapipe in CI: a CPU driver, so the
   figures say what the host paths cost, not what a GPU's DMA engines do). Every copy's bytes are
   checked. Prints a table and a BENCH line a row; exits 1 when a check fails.

   make bench-devices   (BENCH_ARGS=--quick: 3 runs) */
#define _GNU_SOURCE 1
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#ifdef BENCH_HAVE_VULKAN
#  define ACCEL_VULKAN_IMPLEMENTATION
#  include "accel_vulkan.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>

#define BYTES ((size_t)64 << 20)
static int runs = 7, failures = 0;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
static int cmp_d(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}
static double median(double* v, int n) { qsort(v, (size_t)n, sizeof *v, cmp_d); return v[n / 2]; }

/* What one side of a row does once: returns seconds, or a negative number when a call failed. */
typedef double (*side_fn)(void* ctx);
typedef struct copy_ctx {
    accel_queue* q;
    accel_buffer *dst, *src;
    unsigned char* host;           /* raw sides: the program's own memory */
    int raw;                       /* 1: memcpy; 2: accel_buffer_write(dst, host); 3: read(src, host);
                                      4: read + write through host, 4 MiB at a time; 5: the same,
                                      double-buffered: two host buffers, a thread reading chunk k + 1
                                      while this one writes chunk k (raw_double) */
} copy_ctx;
/* raw side 5: the reader thread fills host buffer k % 2 with chunk k once chunk k - 2 left it */
#define RAW_CHUNK ((size_t)4 << 20)
typedef struct raw_pipe {
    copy_ctx* c;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    size_t filled, drained;        /* chunks read / written */
    int failed;
} raw_pipe;
static void* raw_reader(void* p) {
    raw_pipe* rp = (raw_pipe*)p;
    for (size_t k = 0; k * RAW_CHUNK < BYTES; k++) {
        accel_result r;
        pthread_mutex_lock(&rp->lock);
        while (rp->drained + 2 <= k && !rp->failed) pthread_cond_wait(&rp->cond, &rp->lock);
        pthread_mutex_unlock(&rp->lock);
        if (rp->failed) break;
        r = accel_buffer_read(rp->c->src, k * RAW_CHUNK, rp->c->host + (k % 2) * RAW_CHUNK, RAW_CHUNK);
        pthread_mutex_lock(&rp->lock);
        if (r != ACCEL_OK) rp->failed = 1; else rp->filled = k + 1;
        pthread_cond_broadcast(&rp->cond);
        pthread_mutex_unlock(&rp->lock);
    }
    return NULL;
}
static accel_result raw_double(copy_ctx* c) {
    raw_pipe rp;
    pthread_t t;
    memset(&rp, 0, sizeof rp);
    rp.c = c;
    pthread_mutex_init(&rp.lock, NULL);
    pthread_cond_init(&rp.cond, NULL);
    if (pthread_create(&t, NULL, raw_reader, &rp) != 0) return ACCEL_ERROR_BACKEND;
    for (size_t k = 0; k * RAW_CHUNK < BYTES && !rp.failed; k++) {
        accel_result r;
        pthread_mutex_lock(&rp.lock);
        while (rp.filled <= k && !rp.failed) pthread_cond_wait(&rp.cond, &rp.lock);
        pthread_mutex_unlock(&rp.lock);
        if (rp.failed) break;
        r = accel_buffer_write(c->dst, k * RAW_CHUNK, c->host + (k % 2) * RAW_CHUNK, RAW_CHUNK);
        pthread_mutex_lock(&rp.lock);
        if (r != ACCEL_OK) rp.failed = 1; else rp.drained = k + 1;
        pthread_cond_broadcast(&rp.cond);
        pthread_mutex_unlock(&rp.lock);
    }
    pthread_join(t, NULL);
    pthread_mutex_destroy(&rp.lock);
    pthread_cond_destroy(&rp.cond);
    return rp.failed ? ACCEL_ERROR_BACKEND : ACCEL_OK;
}

static double run_accel(void* p) {
    copy_ctx* c = (copy_ctx*)p;
    double t0 = now_s();
    accel_queue_copy(c->q, c->dst, 0, c->src, 0, BYTES);
    if (accel_queue_finish(c->q, ACCEL_WAIT_FOREVER) != ACCEL_OK) return -1;
    return now_s() - t0;
}
static double run_raw(void* p) {
    copy_ctx* c = (copy_ctx*)p;
    double t0 = now_s();
    accel_result r = ACCEL_OK;
    switch (c->raw) {
    case 1: memcpy(accel_buffer_map(c->dst), accel_buffer_map(c->src), BYTES); break;
    case 2: r = accel_buffer_write(c->dst, 0, c->host, BYTES); break;
    case 3: r = accel_buffer_read(c->src, 0, c->host, BYTES); break;
    case 5: r = raw_double(c); break;
    default:
        for (size_t at = 0; at < BYTES && r == ACCEL_OK; at += (size_t)4 << 20) {
            r = accel_buffer_read(c->src, at, c->host, (size_t)4 << 20);
            if (r == ACCEL_OK) r = accel_buffer_write(c->dst, at, c->host, (size_t)4 << 20);
        }
    }
    return r == ACCEL_OK ? now_s() - t0 : -1;
}
static double best_of(side_fn fn, void* ctx) {
    double t[16];
    for (int i = 0; i < runs; i++) if ((t[i] = fn(ctx)) < 0) return -1;
    return median(t, runs);
}
/* Checks dst against the pattern written into src (word i = i * 2654435761). */
static void check(accel_buffer* dst, const char* row) {
    uint32_t* got = (uint32_t*)malloc(BYTES);
    size_t bad = 0;
    if (!got || accel_buffer_read(dst, 0, got, BYTES) != ACCEL_OK) bad = 1;
    for (size_t i = 0; got && !bad && i < BYTES / 4; i++) bad += got[i] != (uint32_t)(i * 2654435761u);
    if (bad) { printf("bench_devices: row %s: WRONG bytes\n", row); failures++; }
    free(got);
}
static void fill_pattern(accel_buffer* b, unsigned char* host) {
    uint32_t* w = (uint32_t*)(void*)host;
    for (size_t i = 0; i < BYTES / 4; i++) w[i] = (uint32_t)(i * 2654435761u);
    if (accel_buffer_write(b, 0, host, BYTES) != ACCEL_OK) failures++;
}

/* One row: q on qdev copies from a buffer of `from` into one of `to` (one of them is qdev); the raw
   side is `raw` (0: none). Returns accel's seconds (negative: failed). */
static double row(const char* name, accel_device* qdev, accel_device* to, accel_device* from, int raw,
                const char* raw_name) {
    copy_ctx c;
    accel_buffer_desc d = { .size = BYTES, .memory = ACCEL_MEMORY_DEVICE };
    double ta = -1, tr = 0;
    memset(&c, 0, sizeof c);
    c.host = (unsigned char*)malloc(BYTES);
    if (!c.host || accel_queue_create(qdev, ACCEL_QUEUE_COMPUTE, &c.q) != ACCEL_OK ||
        accel_buffer_create(to, &d, &c.dst) != ACCEL_OK ||
        accel_buffer_create(from, &d, &c.src) != ACCEL_OK) {
        printf("bench_devices: row %s: setup failed\n", name);
        failures++;
        goto done;
    }
    fill_pattern(c.src, c.host);
    ta = best_of(run_accel, &c);
    check(c.dst, name);
    if (raw) {
        c.raw = raw;
        if (raw == 1 && (!accel_buffer_map(c.dst) || !accel_buffer_map(c.src))) tr = -1;
        else tr = best_of(run_raw, &c);
    }
    if (ta < 0 || tr < 0) {
        printf("bench_devices: row %s: a call failed\n", name);
        failures++;
        ta = -1;
        goto done;
    }
    printf("%-52s | %7.2f GB/s | %-26s %7.2f GB/s | %5.2f\n", name, (double)BYTES / ta / 1e9,
           raw ? raw_name : "-", raw ? (double)BYTES / tr / 1e9 : 0.0, raw ? tr / ta : 0.0);
    printf("BENCH {\"figure\":\"%s\",\"accel_gbps\":%.3f,\"baseline\":\"%s\",\"baseline_gbps\":%.3f}\n", name,
           (double)BYTES / ta / 1e9, raw ? raw_name : "none", raw ? (double)BYTES / tr / 1e9 : 0.0);
done:
    accel_queue_destroy(c.q);
    accel_buffer_destroy(c.dst);
    accel_buffer_destroy(c.src);
    free(c.host);
    return ta;
}
/* Vulkan to Vulkan, three ways: imported memory (rows 5), staged with memmove (6), staged through the
   bounce buffer (7); the environment is read at device create. */
static void vulkan_pairs(const accel_device_desc* d) {
    static const char* const env[3][2] = {
        { NULL, NULL }, { "ACCEL_VULKAN_NO_EXTERNAL_MEMORY", NULL },
        { "ACCEL_VULKAN_NO_EXTERNAL_MEMORY", "ACCEL_VULKAN_NO_MAP_DEVICE" } };
    static const char* const names[3] = { "5 vulkan queue <- other vulkan device (imported)",
                                          "6 the same, staged (no external memory)",
                                          "7 the same, staged, not mapped (bounce)" };
    double t[3] = { -1, -1, -1 };
    for (int k = 0; k < 3; k++) {
        accel_device *x = NULL, *y = NULL;
        accel_peer_info pi;
        for (int e = 0; e < 2; e++) if (env[k][e]) setenv(env[k][e], "1", 1);
        if (accel_device_create(d, &x) == ACCEL_OK && accel_device_create(d, &y) == ACCEL_OK &&
            accel_device_peer_info(x, y, &pi) == ACCEL_OK) {
            if (pi.direct_copy != (k == 0)) printf("bench_devices: row %s: direct_copy %d\n", names[k],
                                                   (int)pi.direct_copy);
            t[k] = k == 2 ? row(names[k], x, x, y, 5, "double-buffered via host")
                          : row(names[k], x, x, y, 4, "read+write via host");
        }
        for (int e = 0; e < 2; e++) if (env[k][e]) unsetenv(env[k][e]);
        accel_device_destroy(x);
        accel_device_destroy(y);
    }
    if (t[0] > 0 && t[1] > 0 && t[2] > 0) {
        printf("vulkan to vulkan: imported is %.2fx staged (memmove), %.2fx staged (bounce), in time\n",
               t[1] / t[0], t[2] / t[0]);
        printf("BENCH {\"figure\":\"vulkan imported vs staged\",\"factor_memmove\":%.3f,"
               "\"factor_bounce\":%.3f}\n", t[1] / t[0], t[2] / t[0]);
    }
}

int main(int argc, char** argv) {
    accel_device *cpu = NULL, *cpu2 = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) runs = 3;
        else { fprintf(stderr, "usage: %s [--quick]\n", argv[0]); return 2; }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (accel_device_create(NULL, &cpu) != ACCEL_OK || accel_device_create(NULL, &cpu2) != ACCEL_OK) return 1;
    printf("peer copies of %zu MiB, median of %d, GB/s       | accel          | raw (the same data moved)"
           "          | ratio raw time / accel time\n", BYTES >> 20, runs);
    row("1 cpu queue <- other cpu device", cpu, cpu, cpu2, 1, "memcpy");
#ifdef BENCH_HAVE_VULKAN
    {
        accel_device *vk = NULL;
        accel_device_desc d = { .backend = accel_vulkan_backend() };
        accel_device_info info;
        if (accel_device_create(&d, &vk) == ACCEL_OK) {
            accel_device_info_get(vk, &info);
            printf("vulkan: %s\n", info.name);
            row("2 vulkan queue, within its device", vk, vk, vk, 0, NULL);
            row("3 vulkan queue <- cpu device (direct)", vk, vk, cpu, 2, "accel_buffer_write");
            row("4 cpu queue <- vulkan device (direct)", cpu, cpu, vk, 3, "accel_buffer_read");
            vulkan_pairs(&d);
        } else {
            printf("bench_devices: no Vulkan device: rows 2-7 skipped\n");
        }
        accel_device_destroy(vk);
    }
#else
    printf("bench_devices: built without Vulkan (-DBENCH_HAVE_VULKAN): rows 2-7 skipped\n");
#endif
    accel_device_destroy(cpu);
    accel_device_destroy(cpu2);
    printf("%d verification failure(s)\n", failures);
    return failures ? 1 : 0;
}
