/* tests/test_pool.c — the CPU backend's worker pool: every work group of every exec runs exactly once,
   an exec is complete before the next command of its queue starts, at every lane count (1 .. the CPUs
   the process may use, that count exactly, and above the core count), with several queues sharing one
   pool and varying local and global sizes; and cpu_threads = 0 follows the process's affinity mask.
   Env ACCEL_TEST_STRESS_SCALE (percent, default 100) scales the rounds (e.g. 10 under TSan). */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#  define _GNU_SOURCE   /* sched_getaffinity / sched_setaffinity / CPU_SET */
#endif
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test.h"
#if defined(__linux__) && TEST_HAVE_THREADS
#  include <sched.h>
#  define POOL_HAVE_AFFINITY 1
#else
#  define POOL_HAVE_AFFINITY 0
#endif

static uint32_t pool_scaled(uint32_t n) {
    const char* e = getenv("ACCEL_TEST_STRESS_SCALE");
    long pct = e && e[0] ? strtol(e, NULL, 10) : 100;
    uint64_t v;
    if (pct <= 0) pct = 100;
    v = (uint64_t)n * (uint64_t)pct / 100u;
    return v < 1 ? 1 : (uint32_t)v;
}

/* The CPUs this process may run on (its affinity mask); the online cores elsewhere. */
static uint32_t pool_allowed_cpus(void) {
#if POOL_HAVE_AFFINITY
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return (uint32_t)CPU_COUNT(&set);
#endif
#if defined(_WIN32)
    { SYSTEM_INFO si; GetSystemInfo(&si); return si.dwNumberOfProcessors ? (uint32_t)si.dwNumberOfProcessors : 1u; }
#elif defined(_SC_NPROCESSORS_ONLN) && !defined(__wasi__)
    { long n = sysconf(_SC_NPROCESSORS_ONLN); return n > 0 ? (uint32_t)n : 1u; }
#else
    return 1;
#endif
}

/* ==== the kernel: counts itself, per item and per group ==== */
/* buffers: items (n words, +1 per run), stamps (n words: the serial of the last exec that ran the
   item), stats (words: 0 = items run twice by one exec, 1 = groups completed, 2 = groups that started
   before every group of the earlier execs had completed). constants: serial (unique per exec, > 0),
   before (groups completed by the earlier execs of this queue), n. 2D: item = y * global_x + x. */
static void pool_tick(const accel_dispatch* d) {
    uint32_t* items = (uint32_t*)d->buffers[0];
    uint32_t* stamps = (uint32_t*)d->buffers[1];
    atomic_uint* stats = (atomic_uint*)d->buffers[2];
    uint32_t serial = d->constants[0], before = d->constants[1], n = d->constants[2];
    if (atomic_load(&stats[1]) < before) atomic_fetch_add(&stats[2], 1);
    for (uint32_t ly = 0; ly < d->group_size[1]; ly++) {
        uint32_t y = d->group_id[1] * d->group_size[1] + ly;
        if (y >= d->global_size[1]) break;
        for (uint32_t lx = 0; lx < d->group_size[0]; lx++) {
            uint32_t x = d->group_id[0] * d->group_size[0] + lx, i = y * d->global_size[0] + x;
            if (x >= d->global_size[0] || i >= n) break;
            if (stamps[i] == serial) atomic_fetch_add(&stats[0], 1);
            stamps[i] = serial;
            items[i] += 1;
        }
    }
    atomic_fetch_add(&stats[1], 1);
}

/* ==== one queue's driver ==== */
#define POOL_ITEMS 4096u
#define POOL_EXECS 100u
typedef struct pool_lane_run {
    accel_device* dev;
    accel_program* prog;
    accel_queue* q;
    accel_signal* s;
    accel_buffer* bufs[3];       /* items, stamps, stats */
    uint32_t index, rounds, serial, groups_total;
    uint32_t expect[POOL_ITEMS];
    uint32_t bad_items, bad_stats, bad_waits;
} pool_lane_run;

/* The shape of exec k of round r of queue q: 1D or 2D, local sizes that do and do not divide. */
static accel_exec_params pool_shape(const pool_lane_run* a, uint32_t r, uint32_t k) {
    uint32_t v = k + r * 7u + a->index * 13u;
    uint32_t lx = 1u + (k % 7u) * 16u, gx = POOL_ITEMS - (v % 5u) * 611u;
    if (v % 4u == 3u) return accel_exec_2d(64u - (v % 3u), 64u - (v % 5u), 1u + v % 9u, 1u + v % 4u);
    if (v % 11u == 5u) return accel_exec_1d(1u + v % 3u, lx);        /* a tiny grid: runs inline */
    return accel_exec_1d(gx, lx);
}
static uint32_t pool_groups(accel_exec_params p) {
    uint32_t g = 1;
    for (int d = 0; d < 3; d++) {
        uint32_t gs = p.global_size[d] ? p.global_size[d] : 1u, ls = p.local_size[d] ? p.local_size[d] : 1u;
        g *= (gs + ls - 1u) / ls;
    }
    return g;
}
/* Adds one exec's coverage to the expected item counts. */
static void pool_expect(pool_lane_run* a, accel_exec_params p) {
    uint32_t gx = p.global_size[0], gy = p.global_size[1] ? p.global_size[1] : 1u;
    for (uint32_t y = 0; y < gy; y++)
        for (uint32_t x = 0; x < gx && y * gx + x < POOL_ITEMS; x++) a->expect[y * gx + x]++;
}

static void pool_round(pool_lane_run* a, uint32_t r) {
    uint32_t stats[3];
    const uint32_t* items;
    for (uint32_t k = 0; k < POOL_EXECS; k++) {
        accel_exec_params p = pool_shape(a, r, k);
        uint32_t c[3] = { ++a->serial, a->groups_total, POOL_ITEMS };
        accel_queue_exec(a->q, a->prog, a->bufs, 3, c, 3, p);
        a->groups_total += pool_groups(p);
        pool_expect(a, p);
    }
    accel_queue_signal(a->q, a->s, r + 1u);
    if (accel_queue_submit(a->q) != ACCEL_OK || accel_signal_wait(a->s, r + 1u, ACCEL_WAIT_FOREVER) != ACCEL_OK) {
        a->bad_waits++;
        return;
    }
    items = (const uint32_t*)accel_buffer_map(a->bufs[0]);
    if (!items || accel_buffer_read(a->bufs[2], 0, stats, sizeof stats) != ACCEL_OK) { a->bad_waits++; return; }
    for (uint32_t i = 0; i < POOL_ITEMS; i++) a->bad_items += items[i] != a->expect[i];
    a->bad_stats += stats[0] != 0 || stats[1] != a->groups_total || stats[2] != 0;
}
static void pool_drive(void* p) {
    pool_lane_run* a = (pool_lane_run*)p;
    for (uint32_t r = 0; r < a->rounds && !a->bad_items && !a->bad_stats && !a->bad_waits; r++) pool_round(a, r);
}

static int pool_lane_setup(pool_lane_run* a, accel_device* dev, accel_program* prog, uint32_t index, uint32_t rounds) {
    memset(a, 0, sizeof *a);
    a->dev = dev; a->prog = prog; a->index = index; a->rounds = rounds;
    if (!CHECK_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &a->q)) || !CHECK_OK(accel_signal_create(dev, 0, &a->s)))
        return 0;
    for (int b = 0; b < 3; b++) {
        if (!CHECK_OK(test_buffer_create(dev, POOL_ITEMS * 4u, ACCEL_MEMORY_HOST, &a->bufs[b]))) return 0;
        if (!CHECK_OK(test_buffer_set_u32(a->bufs[b], POOL_ITEMS, 0))) return 0;
    }
    return 1;
}

/* queues host threads (one per queue where threads exist) drive one device of `lanes` lanes. */
#define POOL_MAX_QUEUES 4u
static void pool_exactly_once(uint32_t lanes, uint32_t queues, uint32_t rounds) {
    static pool_lane_run runs[POOL_MAX_QUEUES];
    accel_device_desc desc;
    accel_device* dev = NULL;
    accel_program* prog = NULL;
    accel_program_desc pd;
    uint32_t made = 0;
    memset(&desc, 0, sizeof desc);
    desc.backend = accel_cpu_backend();
    desc.cpu_threads = lanes;
    memset(&pd, 0, sizeof pd);
    pd.name = "pool_tick"; pd.cpu = pool_tick; pd.buffer_count = 3; pd.constant_count = 3;
    REQUIRE_OK(test_device_create_desc(desc, &dev));
    if (CHECK_OK(accel_program_create(dev, &pd, &prog)))
        for (; made < queues && pool_lane_setup(&runs[made], dev, prog, made, rounds); made++) { }
    if (made == queues) {
#if TEST_HAVE_THREADS
        test_thread t[POOL_MAX_QUEUES];
        uint32_t started = 0;
        for (; started < queues && CHECK(test_thread_start(&t[started], pool_drive, &runs[started])); started++) { }
        for (uint32_t i = 0; i < started; i++) test_thread_join(&t[i]);
#else
        for (uint32_t i = 0; i < queues; i++) pool_drive(&runs[i]);
#endif
        for (uint32_t i = 0; i < queues; i++) {
            if (runs[i].bad_items || runs[i].bad_stats || runs[i].bad_waits)
                fprintf(stderr, "    lanes %u, queue %u: %u items off, %u bad stats, %u failed waits\n", lanes, i,
                        runs[i].bad_items, runs[i].bad_stats, runs[i].bad_waits);
            CHECK_EQ_INT(runs[i].bad_items, 0);
            CHECK_EQ_INT(runs[i].bad_stats, 0);
            CHECK_EQ_INT(runs[i].bad_waits, 0);
        }
    }
    accel_device_destroy(dev);   /* releases the queues, signals, buffers and program */
}

/* The lane counts worth trying: 1 .. 4, the allowed CPUs, one above, twice the cores, 8. */
static uint32_t pool_lane_counts(uint32_t* out) {
    uint32_t cpus = pool_allowed_cpus(), cand[8] = { 1, 2, 3, 4, cpus, cpus + 1u, 2u * cpus, 8 }, n = 0;
    for (uint32_t i = 0; i < 8; i++) {
        uint32_t dup = 0;
        for (uint32_t j = 0; j < n; j++) dup |= out[j] == cand[i];
        if (!dup && cand[i] <= 64) out[n++] = cand[i];
    }
    return n;
}

TEST(pool_every_group_exactly_once_every_lane_count) {
    uint32_t counts[8], n = pool_lane_counts(counts);
    for (uint32_t i = 0; i < n && !TEST_FAILED_SO_FAR(); i++) pool_exactly_once(counts[i], POOL_MAX_QUEUES, pool_scaled(30));
}

/* The shape of issue 9's report: 4 queues, cpu_threads = 8, many rounds. */
TEST(pool_exactly_once_8_lanes_4_queues_long) {
    pool_exactly_once(8, POOL_MAX_QUEUES, pool_scaled(300));
}

/* ==== cpu_threads = 0 follows the affinity mask ==== */
#if POOL_HAVE_AFFINITY
static uint32_t pool_device_lanes(uint32_t cpu_threads) {
    accel_device_desc desc;
    accel_device* dev = NULL;
    accel_device_info info;
    unsigned lanes = 0;
    memset(&desc, 0, sizeof desc);
    desc.backend = accel_cpu_backend();
    desc.cpu_threads = cpu_threads;
    if (!CHECK_OK(test_device_create_desc(desc, &dev))) return 0;
    if (CHECK_OK(accel_device_info_get(dev, &info))) CHECK(sscanf(info.name, "cpu: %u thread", &lanes) == 1);
    accel_device_destroy(dev);
    return lanes;
}
#endif

TEST(pool_default_lanes_follow_affinity_mask) {
#if POOL_HAVE_AFFINITY
    cpu_set_t old, one;
    int first = -1;
    CPU_ZERO(&old);
    REQUIRE(sched_getaffinity(0, sizeof old, &old) == 0);
    CHECK_EQ_INT(pool_device_lanes(0), CPU_COUNT(&old));
    for (int c = 0; c < CPU_SETSIZE && first < 0; c++) if (CPU_ISSET(c, &old)) first = c;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
    CHECK_EQ_INT(pool_device_lanes(0), 1);
    CHECK_EQ_INT(pool_device_lanes(3), 3);              /* an explicit count stays as asked */
    pool_exactly_once(1, 2, pool_scaled(5));             /* lanes == allowed CPUs == 1 */
    pool_exactly_once(3, 2, pool_scaled(5));             /* above them */
    CHECK(sched_setaffinity(0, sizeof old, &old) == 0);
#else
    SKIP("no affinity mask to restrict on this platform / build");
#endif
}

int main(int argc, char** argv) {
    test_begin(argc, argv);
    test_only_backends("cpu", "the CPU backend's worker pool");
    RUN(pool_every_group_exactly_once_every_lane_count);
    RUN(pool_exactly_once_8_lanes_4_queues_long);
    RUN(pool_default_lanes_follow_affinity_mask);
    return test_end();
}
