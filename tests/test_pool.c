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
#include "pool_check.h"
#if !defined(_WIN32)
#  include <unistd.h>   /* sysconf (the implementation's own includes are not seen here: Makefile) */
#endif
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

/* queues host threads (one per queue where threads exist) drive one device of `lanes` lanes. */
#define POOL_MAX_QUEUES 4u
static void pool_exactly_once(uint32_t lanes, uint32_t queues, uint32_t rounds) {
    static pool_lane_run runs[POOL_MAX_QUEUES];
    accel_device_desc desc;
    accel_device* dev = NULL;
    accel_program* prog = NULL;
    uint32_t made = 0;
    memset(&desc, 0, sizeof desc);
    desc.backend = accel_cpu_backend();
    desc.cpu_threads = lanes;
    REQUIRE_OK(test_device_create_desc(desc, &dev));
    if (CHECK_OK(pool_program_create(dev, &prog)))
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
            if (runs[i].bad_items || runs[i].bad_stats || runs[i].bad_waits) {
                char who[48];
                snprintf(who, sizeof who, "    lanes %u, queue %u", lanes, i);
                pool_report(&runs[i], who);
            }
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

/* The checker itself: its group counts are 32-bit and wrap in a long soak (a 900 s one got there); the
   order check compares them as a difference, so the wrap is no finding (it was one, twice). */
TEST(pool_checker_counts_wrap) {
    accel_device* dev = NULL;
    accel_program* p = NULL;
    pool_lane_run a;
    uint32_t start = 0xFFFFFFF0u;
    if (!CHECK_OK(test_device_create(&dev))) return;
    if (CHECK_OK(pool_program_create(dev, &p)) && pool_lane_setup(&a, dev, p, 0, 2) &&
        CHECK_OK(accel_buffer_write(a.bufs[2], 4, &start, 4))) {
        a.groups_total = start;
        pool_drive(&a);
        if (a.bad_items || a.bad_stats || a.bad_waits) pool_report(&a, "    wrap");
        CHECK_EQ_INT(a.bad_stats, 0);
        CHECK_EQ_INT(a.bad_items, 0);
        CHECK(a.groups_total < start);   /* it wrapped */
    }
    accel_device_destroy(dev);
}

/* ==== cpu_threads = 0 follows the affinity mask ==== */
#if POOL_HAVE_AFFINITY
static uint32_t pool_device_lanes(uint32_t cpu_threads) {
    accel_device_desc desc;
    accel_device* dev = NULL;
    accel_device_info info;
    uint32_t lanes = 0;
    memset(&desc, 0, sizeof desc);
    desc.backend = accel_cpu_backend();
    desc.cpu_threads = cpu_threads;
    if (!CHECK_OK(test_device_create_desc(desc, &dev))) return 0;
    if (CHECK_OK(accel_device_info_get(dev, &info))) lanes = info.cpu_threads;
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

/* More queues than lanes: a queue whose exec waits for a lane that a long kernel holds spins for
   ACCEL_CPU_SPIN_NS at most, then sleeps ("keep it bounded so an idle device burns no CPU"). Before:
   it yielded in a loop for as long as the lane was held (a CPU's worth). Linux: the process's CPU
   time is measured. */
#if defined(__linux__) && TEST_HAVE_THREADS
static void pool_k_sleep(const accel_dispatch* d) { struct timespec ts = { 0, 600000000 }; (void)d; nanosleep(&ts, NULL); }
static void pool_k_nop(const accel_dispatch* d) { (void)d; }
/* A device of `lanes` lanes with two programs of no bindings: fn's, and one that does nothing. */
static bool pool_rig_make(uint32_t lanes, void (*fn)(const accel_dispatch*), const char* name,
                          accel_device** dev, accel_program** prog, accel_program** nop) {
    accel_device_desc desc;
    accel_program_desc pd;
    memset(&desc, 0, sizeof desc);
    desc.cpu_threads = lanes;
    if (!CHECK_OK(test_device_create_desc(desc, dev))) return false;
    memset(&pd, 0, sizeof pd);
    pd.cpu = fn; pd.name = name;
    if (!CHECK_OK(accel_program_create(*dev, &pd, prog))) return false;
    pd.cpu = pool_k_nop; pd.name = "nothing";
    return CHECK_OK(accel_program_create(*dev, &pd, nop));
}
#endif
TEST(pool_queue_waiting_for_a_lane_sleeps) {
#if defined(__linux__) && TEST_HAVE_THREADS
    accel_device* dev = NULL;
    accel_program *slow, *nop;
    accel_queue *q0, *q1;
    accel_signal* done;
    struct timespec settle = { 0, 50000000 };
    if (!pool_rig_make(1, pool_k_sleep, "sleep 600 ms", &dev, &slow, &nop)) { accel_device_destroy(dev); return; }
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q0));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q1));
    REQUIRE_OK(accel_signal_create(dev, 0, &done));
    accel_queue_exec(q0, slow, NULL, 0, NULL, 0, accel_exec_1d(1, 1));   /* holds the one lane */
    CHECK_OK(accel_queue_submit(q0));
    nanosleep(&settle, NULL);
    uint64_t c0 = test_cpu_ns(CLOCK_PROCESS_CPUTIME_ID), t0 = test_now_ns();
    accel_queue_exec(q1, nop, NULL, 0, NULL, 0, accel_exec_1d(1, 1));    /* waits for it */
    accel_queue_signal(q1, done, 1);
    CHECK_OK(accel_queue_submit(q1));
    CHECK_OK(accel_signal_wait(done, 1, ACCEL_WAIT_FOREVER));
    uint64_t cpu = test_cpu_ns(CLOCK_PROCESS_CPUTIME_ID) - c0, wall = test_now_ns() - t0;
    CHECK(wall >= 300000000u);              /* it did wait for the lane */
    if (!CHECK(cpu < wall / 4)) fprintf(stderr, "    %llu ns of CPU over %llu ns waiting for a lane\n", (unsigned long long)cpu, (unsigned long long)wall);
    CHECK_OK(accel_queue_finish(q0, ACCEL_WAIT_FOREVER));
    accel_device_destroy(dev);
#else
    SKIP("measures the process's CPU time: Linux with threads");
#endif
}

/* A pooled exec's owner gives its lane back once no chunk of the job is left to claim: with 2 lanes, a
   2-group exec whose group 1 (on the worker) waits for another queue's 1-group exec, while group 0 (the
   owner's) takes 50 ms, ran: the owner held its lane idle until the job ended, and the other exec had
   none (helper 89: TIMEOUT after 3 s; FOREVER hung). */
#if TEST_HAVE_THREADS && defined(__linux__)
static accel_signal* pool_lane_sb;
static atomic_int pool_lane_result;
static void pool_k_owner_or_wait(const accel_dispatch* d) {
    if (d->group_id[0] == 0) { struct timespec ts = { 0, 50000000 }; nanosleep(&ts, NULL); return; }
    atomic_store(&pool_lane_result, (int)accel_signal_wait(pool_lane_sb, 1, 5000000000ull));
}
#endif
TEST(pool_owner_gives_its_lane_back_while_it_waits_for_the_job) {
#if TEST_HAVE_THREADS && defined(__linux__)
    accel_device* dev = NULL;
    accel_program *pa, *pb;
    accel_queue *qa, *qb;
    struct timespec settle = { 0, 10000000 };
    if (!pool_rig_make(2, pool_k_owner_or_wait, "owner or wait", &dev, &pa, &pb)) { accel_device_destroy(dev); return; }
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &qa));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &qb));
    REQUIRE_OK(accel_signal_create(dev, 0, &pool_lane_sb));
    atomic_store(&pool_lane_result, 99);
    accel_queue_exec(qa, pa, NULL, 0, NULL, 0, accel_exec_1d(2, 1));
    CHECK_OK(accel_queue_submit(qa));
    nanosleep(&settle, NULL);
    accel_queue_exec(qb, pb, NULL, 0, NULL, 0, accel_exec_1d(1, 1));
    accel_queue_signal(qb, pool_lane_sb, 1);
    CHECK_OK(accel_queue_submit(qb));
    CHECK_OK(accel_queue_finish(qa, 10000000000ull));
    CHECK_EQ_INT(atomic_load(&pool_lane_result), ACCEL_OK);
    accel_device_destroy(dev);
#else
    SKIP("threads (Linux: nanosleep)");
#endif
}

/* Queues waiting for a lane while every lane is held sleep in growing slices, not a spin between them
   (helper 89: 8 queues waiting cost 27% of a CPU, 15 cost 45%). */
TEST(pool_many_queues_waiting_for_a_lane_sleep) {
#if defined(__linux__) && TEST_HAVE_THREADS
    enum { WAITERS = 8 };
    accel_device* dev = NULL;
    accel_program *slow, *nop;
    accel_queue *q0, *q[WAITERS];
    struct timespec settle = { 0, 100000000 }, measure = { 0, 500000000 };
    if (!pool_rig_make(1, pool_k_sleep, "sleep 600 ms", &dev, &slow, &nop)) { accel_device_destroy(dev); return; }
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q0));
    accel_queue_exec(q0, slow, NULL, 0, NULL, 0, accel_exec_1d(1, 1));   /* holds the one lane */
    CHECK_OK(accel_queue_submit(q0));
    for (int i = 0; i < WAITERS; i++) {
        REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q[i]));
        accel_queue_exec(q[i], nop, NULL, 0, NULL, 0, accel_exec_1d(1, 1));
        CHECK_OK(accel_queue_submit(q[i]));
    }
    nanosleep(&settle, NULL);   /* past their spin */
    uint64_t c0 = test_cpu_ns(CLOCK_PROCESS_CPUTIME_ID), t0 = test_now_ns();
    nanosleep(&measure, NULL);
    uint64_t cpu = test_cpu_ns(CLOCK_PROCESS_CPUTIME_ID) - c0, wall = test_now_ns() - t0;
    if (!CHECK(cpu < wall / 10))
        fprintf(stderr, "    %llu ns of CPU over %llu ns, %d queues waiting for a lane\n", (unsigned long long)cpu,
                (unsigned long long)wall, WAITERS);
    for (int i = 0; i < WAITERS; i++) CHECK_OK(accel_queue_finish(q[i], ACCEL_WAIT_FOREVER));
    accel_device_destroy(dev);
#else
    SKIP("measures the process's CPU time: Linux with threads");
#endif
}

int main(int argc, char** argv) {
    test_begin(argc, argv);
    test_only_backends("cpu", "the CPU backend's worker pool");
    RUN(pool_every_group_exactly_once_every_lane_count);
    RUN(pool_exactly_once_8_lanes_4_queues_long);
    RUN(pool_checker_counts_wrap);
    RUN(pool_default_lanes_follow_affinity_mask);
    RUN(pool_queue_waiting_for_a_lane_sleeps);
    RUN(pool_owner_gives_its_lane_back_while_it_waits_for_the_job);
    RUN(pool_many_queues_waiting_for_a_lane_sleep);
    return test_end();
}
