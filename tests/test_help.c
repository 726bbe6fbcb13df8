/* tests/test_help.c — the CPU backend's waits that help (accel.h, "cpu: waits that help"): a host
   thread that waits without a timeout for a signal a CPU queue of the same device will reach, or
   finishes a CPU queue, may run that queue's batches itself; exactly one thread runs a queue's batches,
   in order; a helper stops once its value is reached, never waits inside a batch and leaves host calls
   to the executor; kernels and host calls never help (no recursion); a wait with a timeout never helps;
   a waiter on another device's signal helps nobody; failure and destroy while a helper runs a batch;
   after waits that helped, the batches nobody helps with still run (on the executor, which leaves
   batches to helpers meanwhile).
   Env ACCEL_TEST_STRESS_SCALE (percent, default 100) scales the rounds (e.g. 10 under TSan). */
#if !defined(_WIN32) && !defined(__wasi__) && !defined(__EMSCRIPTEN__)
#  define _POSIX_C_SOURCE 200809L   /* nanosleep */
#endif
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test.h"
#if TEST_HAVE_THREADS && !defined(_WIN32)
#  include <time.h>
#endif

#if TEST_HAVE_THREADS
static _Thread_local int help_marker;          /* its address names the thread that reads it */
static uintptr_t help_this_thread(void) { return (uintptr_t)&help_marker; }
#endif

#if TEST_HAVE_THREADS
static uint32_t help_scaled(uint32_t n) {
    const char* e = getenv("ACCEL_TEST_STRESS_SCALE");
    long pct = e && e[0] ? strtol(e, NULL, 10) : 100;
    uint64_t v;
    if (pct <= 0) pct = 100;
    v = (uint64_t)n * (uint64_t)pct / 100u;
    return v < 1 ? 1 : (uint32_t)v;
}
static void help_sleep_ms(unsigned ms) {
#  if defined(_WIN32)
    Sleep(ms);
#  else
    struct timespec ts = { (time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L };
#    if defined(TEST_USE_PTHREADS) || !defined(__EMSCRIPTEN__)
    nanosleep(&ts, NULL);
#    else
    thrd_sleep(&ts, NULL);   /* Emscripten: C11 threads, no _POSIX_C_SOURCE */
#    endif
#  endif
}
#endif

#if TEST_HAVE_THREADS
/* Records in word 0 of its buffer the thread it ran on. */
static void k_where(const accel_dispatch* d) {
    uintptr_t* w = (uintptr_t*)d->buffers[0];
    w[0] = help_this_thread();
}
typedef struct where_rig { accel_device* dev; accel_queue* q; accel_signal* s; accel_buffer* buf; accel_program* p; } where_rig;
static bool where_rig_open(where_rig* r, uint32_t lanes) {
    accel_device_desc d;
    memset(&d, 0, sizeof d);
    d.cpu_threads = lanes;
    if (!CHECK_OK(test_device_create_desc(d, &r->dev))) return false;
    if (!CHECK_OK(accel_queue_create(r->dev, ACCEL_QUEUE_COMPUTE, &r->q))) return false;
    if (!CHECK_OK(accel_signal_create(r->dev, 0, &r->s))) return false;
    if (!CHECK_OK(accel_buffer_create(r->dev, &(accel_buffer_desc){ .size = 64 }, &r->buf))) return false;
    return CHECK_OK(accel_program_create(r->dev, &(accel_program_desc){ .name = "where", .cpu = k_where, .buffer_count = 1 },
                                         &r->p));
}
/* One exec + signal after the executor has gone to sleep; returns the thread the kernel ran on. */
static uintptr_t where_round(where_rig* r, uint64_t v, uint64_t timeout_ns) {
    uintptr_t w = 0;
    help_sleep_ms(3);   /* longer than ACCEL_CPU_SPIN_NS: the executor sleeps */
    accel_queue_exec(r->q, r->p, &r->buf, 1, NULL, 0, accel_exec_1d(1, 1));
    accel_queue_signal(r->q, r->s, v);
    CHECK_OK(accel_queue_submit(r->q));
    CHECK_OK(accel_signal_wait(r->s, v, timeout_ns));
    CHECK_OK(accel_buffer_read(r->buf, 0, &w, sizeof w));
    return w;
}
#endif

/* A wait without a timeout runs the batch on the waiting thread (the executor sleeps, so the waiter
   takes the queue's turn first, nearly every time); a wait with a timeout never does; nor does a
   finish with one. A finish without one does. */
TEST(wait_without_timeout_runs_the_batch_on_the_waiting_thread) {
#if TEST_HAVE_THREADS
    where_rig r;
    int here = 0, there = 0;
    if (!where_rig_open(&r, 2)) return;
    for (uint64_t i = 1; i <= 20; i++) here += where_round(&r, i, ACCEL_WAIT_FOREVER) == help_this_thread();
    for (uint64_t i = 21; i <= 40; i++) there += where_round(&r, i, 10000000000ull) != help_this_thread();
    CHECK(here >= 1);
    if (here < 10) fprintf(stderr, "    note: %d of 20 waits ran the batch themselves\n", here);
    CHECK_EQ_INT(there, 20);
    {   /* accel_queue_finish without a timeout helps too (up to 50 rounds: on a loaded machine the
           executor may wake first in the first ten, as it did once in CI) */
        uintptr_t w = 0;
        int fin = 0;
        for (int i = 0; i < 50 && (i < 10 || fin == 0); i++) {
            help_sleep_ms(3);
            accel_queue_exec(r.q, r.p, &r.buf, 1, NULL, 0, accel_exec_1d(1, 1));
            CHECK_OK(accel_queue_finish(r.q, ACCEL_WAIT_FOREVER));
            CHECK_OK(accel_buffer_read(r.buf, 0, &w, sizeof w));
            fin += w == help_this_thread();
        }
        CHECK(fin >= 1);
    }
    accel_device_destroy(r.dev);
#else
    SKIP("no threads: waits run parked work already");
#endif
}

#if TEST_HAVE_THREADS
/* Every exec adds 1 to each item of its range: after everything, each item counts its execs. */
static void k_add(const accel_dispatch* d) {
    uint32_t* a = (uint32_t*)d->buffers[0];
    uint32_t i0 = d->group_id[0] * d->group_size[0];
    for (uint32_t i = i0; i < i0 + d->group_size[0] && i < d->global_size[0]; i++) a[i] += 1;
}
enum { HX_QUEUES = 6, HX_THREADS = 4, HX_ITEMS = 700 };
typedef struct hx_shared {
    accel_device* dev;
    accel_queue* q[HX_QUEUES];
    accel_buffer* buf[HX_QUEUES];
    accel_signal* s[HX_QUEUES];
    accel_program* p;
    atomic_flag lock[HX_QUEUES];   /* a submitter owns a queue while it records + submits */
    uint64_t next[HX_QUEUES];      /* the queue's next signal value (under its lock) */
    uint32_t expect[HX_QUEUES][HX_ITEMS];
    uint32_t rounds;
    atomic_int bad;
} hx_shared;
typedef struct hx_arg { hx_shared* sh; uint32_t seed; } hx_arg;
static uint32_t hx_rand(uint32_t* s) { *s = *s * 1664525u + 1013904223u; return *s >> 8; }
static void hx_main(void* p) {
    hx_arg* a = (hx_arg*)p;
    hx_shared* sh = a->sh;
    for (uint32_t r = 0; r < sh->rounds; r++) {
        uint32_t qi = hx_rand(&a->seed) % HX_QUEUES, n = 1 + hx_rand(&a->seed) % HX_ITEMS;
        uint32_t local = 1u << (hx_rand(&a->seed) % 7), execs = 1 + hx_rand(&a->seed) % 3;
        uint64_t v;
        if (hx_rand(&a->seed) % 2) n = 1 + n % local;   /* one group: work a helper runs itself */
        while (atomic_flag_test_and_set(&sh->lock[qi])) {}
        for (uint32_t e = 0; e < execs; e++) {
            accel_queue_exec(sh->q[qi], sh->p, &sh->buf[qi], 1, NULL, 0, accel_exec_1d(n, local));
            for (uint32_t i = 0; i < n; i++) sh->expect[qi][i]++;
        }
        v = ++sh->next[qi];
        accel_queue_signal(sh->q[qi], sh->s[qi], v);
        if (accel_queue_submit(sh->q[qi]) != ACCEL_OK) atomic_store(&sh->bad, 1);
        if (hx_rand(&a->seed) % 4 == 0) {   /* finish submits too: under the queue's lock */
            if (accel_queue_finish(sh->q[qi], ACCEL_WAIT_FOREVER) != ACCEL_OK) atomic_store(&sh->bad, 2);
            atomic_flag_clear(&sh->lock[qi]);
        } else {
            atomic_flag_clear(&sh->lock[qi]);
            if (accel_signal_wait(sh->s[qi], v, ACCEL_WAIT_FOREVER) != ACCEL_OK) atomic_store(&sh->bad, 3);
        }
        if (hx_rand(&a->seed) % 8 == 0) help_sleep_ms(1);   /* let executors fall asleep now and then */
    }
}
#endif

/* Exactly once with helping waiters: several host threads record, submit and wait (or finish) on
   shared queues, at 1, 2, 3 and 7 lanes; every item of every exec is counted exactly once. Half of the
   execs are one group (a helper runs them itself), half several (a helper hands them to the pool and
   works on them as a lane, beside the pool's workers and other queues' executors and helpers). */
TEST(helping_waiters_run_every_group_exactly_once) {
#if TEST_HAVE_THREADS
    static const uint32_t lanes[4] = { 1, 2, 3, 7 };
    for (int li = 0; li < 4 && !TEST_FAILED_SO_FAR(); li++) {
        static hx_shared sh;
        test_thread th[HX_THREADS];
        hx_arg args[HX_THREADS];
        accel_device_desc d;
        memset(&sh, 0, sizeof sh);
        memset(&d, 0, sizeof d);
        d.cpu_threads = lanes[li];
        sh.rounds = help_scaled(300);
        REQUIRE_OK(test_device_create_desc(d, &sh.dev));
        REQUIRE_OK(accel_program_create(sh.dev, &(accel_program_desc){ .name = "add", .cpu = k_add, .buffer_count = 1 }, &sh.p));
        for (int i = 0; i < HX_QUEUES; i++) {
            REQUIRE_OK(accel_queue_create(sh.dev, ACCEL_QUEUE_COMPUTE, &sh.q[i]));
            REQUIRE_OK(accel_signal_create(sh.dev, 0, &sh.s[i]));
            REQUIRE_OK(accel_buffer_create(sh.dev, &(accel_buffer_desc){ .size = HX_ITEMS * 4 }, &sh.buf[i]));
            REQUIRE_OK(test_buffer_set_u32(sh.buf[i], HX_ITEMS, 0));
            atomic_flag_clear(&sh.lock[i]);
        }
        for (int t = 0; t < HX_THREADS; t++) {
            args[t].sh = &sh;
            args[t].seed = 12345u + (uint32_t)t * 7919u + (uint32_t)li;
            REQUIRE(test_thread_start(&th[t], hx_main, &args[t]));
        }
        for (int t = 0; t < HX_THREADS; t++) test_thread_join(&th[t]);
        CHECK_EQ_INT(atomic_load(&sh.bad), 0);
        for (int i = 0; i < HX_QUEUES; i++) {
            uint32_t got[HX_ITEMS];
            CHECK_OK(accel_queue_finish(sh.q[i], ACCEL_WAIT_FOREVER));
            CHECK_OK(accel_buffer_read(sh.buf[i], 0, got, sizeof got));
            for (uint32_t k = 0; k < HX_ITEMS; k++)
                if (!CHECK_EQ_INT(got[k], sh.expect[i][k])) { fprintf(stderr, "    lanes %u queue %d item %u\n", lanes[li], i, k); break; }
        }
        accel_device_destroy(sh.dev);
    }
#else
    SKIP("no threads");
#endif
}

#if TEST_HAVE_THREADS
/* Appends its constant to a log: log[0] is the count, then the values in the order the execs ran. */
static void k_log(const accel_dispatch* d) {
    uint32_t* log = (uint32_t*)d->buffers[0];
    log[1 + log[0]] = d->constants[0];
    log[0]++;
}
typedef struct gate_arg { accel_signal* g; uint32_t n; } gate_arg;
static void gate_main(void* p) {
    gate_arg* a = (gate_arg*)p;
    for (uint32_t i = 1; i <= a->n; i++) {
        if (i % 3 == 0) help_sleep_ms(1);
        accel_signal_set(a->g, i);
    }
}
#endif

/* Order across batches while the waiter and the executor hand the queue back and forth: batch i waits
   for a gate another thread raises step by step, then logs i and signals i; the host waits for each
   i without a timeout (helping where the gate is up, leaving the batch to the executor where not). */
TEST(batches_stay_in_order_when_helper_and_executor_alternate) {
#if TEST_HAVE_THREADS
    enum { N = 400, LOG = 1 + N + N / 2 };
    accel_device* dev;
    accel_queue* q;
    accel_signal *gate, *s;
    accel_buffer* log;
    accel_program* p;
    test_thread th;
    gate_arg ga;
    uint32_t* got = (uint32_t*)calloc(LOG, sizeof *got);
    REQUIRE(got != NULL);
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    REQUIRE_OK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = LOG * 4 }, &log));
    REQUIRE_OK(test_buffer_set_u32(log, LOG, 0));
    REQUIRE_OK(accel_program_create(dev, &(accel_program_desc){ .name = "log", .cpu = k_log, .buffer_count = 1,
                                                               .constant_count = 1 }, &p));
    for (uint32_t i = 1; i <= N; i++) {
        accel_queue_wait(q, gate, i);
        accel_queue_exec(q, p, &log, 1, &i, 1, accel_exec_1d(1, 1));
        accel_queue_signal(q, s, i);
        if (i % 2) accel_queue_exec(q, p, &log, 1, &i, 1, accel_exec_1d(1, 1));   /* after the signal */
        CHECK_OK(accel_queue_submit(q));
    }
    ga.g = gate;
    ga.n = N;
    REQUIRE(test_thread_start(&th, gate_main, &ga));
    for (uint32_t i = 1; i <= N; i++) CHECK_OK(accel_signal_wait(s, i, ACCEL_WAIT_FOREVER));
    test_thread_join(&th);
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    CHECK_OK(accel_buffer_read(log, 0, got, LOG * 4));
    CHECK_EQ_INT(got[0], N + N / 2);
    for (uint32_t i = 1, k = 1; i <= N && k < LOG; i++) {
        if (!CHECK_EQ_INT(got[k], i)) break;
        k++;
        if (i % 2) { if (!CHECK_EQ_INT(got[k], i)) break; k++; }
    }
    free(got);
    accel_device_destroy(dev);
#else
    SKIP("no threads");
#endif
}

#if TEST_HAVE_THREADS
typedef struct nest_state {
    accel_queue* other;           /* another queue of the kernel's device */
    accel_program* mark;          /* k_where */
    accel_buffer* buf;            /* where k_where records its thread */
    accel_signal *later, *s2;
    uint64_t target;
    accel_result r, r2;
    uintptr_t where;              /* the thread the waiting kernel ran on */
} nest_state;
static nest_state nest;
/* A kernel that waits (with a timeout) for a value only a later batch of its own queue reaches. */
static void k_waits_for_later(const accel_dispatch* d) {
    (void)d;
    nest.where = help_this_thread();
    nest.r = accel_signal_wait(nest.later, nest.target, 20000000u);
}
/* A kernel that submits a one-group exec to another queue and waits for it without a timeout. */
static void k_waits_for_other(const accel_dispatch* d) {
    (void)d;
    nest.where = help_this_thread();
    accel_queue_exec(nest.other, nest.mark, &nest.buf, 1, NULL, 0, accel_exec_1d(1, 1));
    accel_queue_signal(nest.other, nest.s2, nest.target);
    nest.r2 = accel_queue_submit(nest.other);
    if (nest.r2 == ACCEL_OK) nest.r2 = accel_signal_wait(nest.s2, nest.target, ACCEL_WAIT_FOREVER);
}
#endif

/* A kernel that waits for its own queue's later value gets TIMEOUT, as without helping, whether the
   executor or a helping waiter runs it. */
TEST(kernel_waiting_on_its_own_queue_times_out) {
#if TEST_HAVE_THREADS
    accel_device* dev;
    accel_queue* q;
    accel_signal *done;
    accel_program* p;
    uintptr_t host = help_this_thread();
    int on_host = 0;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_signal_create(dev, 0, &nest.later));
    REQUIRE_OK(accel_signal_create(dev, 0, &done));
    REQUIRE_OK(accel_program_create(dev, &(accel_program_desc){ .name = "waits", .cpu = k_waits_for_later }, &p));
    for (uint64_t i = 1; i <= 6; i++) {
        help_sleep_ms(3);
        nest.target = i;
        accel_queue_exec(q, p, NULL, 0, NULL, 0, accel_exec_1d(1, 1));
        accel_queue_signal(q, done, i);
        CHECK_OK(accel_queue_submit(q));
        accel_queue_signal(q, nest.later, i);   /* the later batch */
        CHECK_OK(accel_queue_submit(q));
        CHECK_OK(accel_signal_wait(done, i, ACCEL_WAIT_FOREVER));
        CHECK_RESULT(nest.r, ACCEL_TIMEOUT);
        on_host += nest.where == host;
        CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    }
    if (on_host == 0) fprintf(stderr, "    note: the executor ran every one (no helping seen)\n");
    accel_device_destroy(dev);
#else
    SKIP("no threads");
#endif
}

/* A kernel never runs other work on its stack: a kernel that submits to another queue of its device
   (asleep: its executor has been idle for a while) and waits for it without a timeout waits while that
   queue's executor runs it, on a thread of its own, whether the kernel runs on its queue's executor
   (the host waits with a timeout) or on the host thread that helps (the host waits without one). */
TEST(a_kernel_that_waits_never_runs_other_work) {
#if TEST_HAVE_THREADS
    accel_device_desc desc;
    accel_device* dev;
    accel_queue* q;
    accel_signal* done;
    accel_program* p;
    memset(&desc, 0, sizeof desc);
    desc.cpu_threads = 2;   /* the waiting kernel holds one lane, the other queue's exec takes the other */
    REQUIRE_OK(test_device_create_desc(desc, &dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &nest.other));
    REQUIRE_OK(accel_signal_create(dev, 0, &nest.s2));
    REQUIRE_OK(accel_signal_create(dev, 0, &done));
    REQUIRE_OK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = 64 }, &nest.buf));
    REQUIRE_OK(accel_program_create(dev, &(accel_program_desc){ .name = "where", .cpu = k_where, .buffer_count = 1 },
                                    &nest.mark));
    REQUIRE_OK(accel_program_create(dev, &(accel_program_desc){ .name = "waits", .cpu = k_waits_for_other }, &p));
    for (uint64_t i = 1; i <= 8; i++) {
        uintptr_t other = 0;
        help_sleep_ms(3);   /* both executors asleep */
        nest.target = i;
        accel_queue_exec(q, p, NULL, 0, NULL, 0, accel_exec_1d(1, 1));
        accel_queue_signal(q, done, i);
        CHECK_OK(accel_queue_submit(q));
        CHECK_OK(accel_signal_wait(done, i, i % 2 ? ACCEL_WAIT_FOREVER : 20000000000ull));
        CHECK_OK(nest.r2);
        CHECK_OK(accel_buffer_read(nest.buf, 0, &other, sizeof other));
        if (!CHECK(other != nest.where)) fprintf(stderr, "    round %u: the other queue's exec ran inside the kernel\n",
                                                 (unsigned)i);
    }
    accel_device_destroy(dev);
#else
    SKIP("no threads");
#endif
}

/* A waiter on a signal of another device than the queue that reaches it helps nobody (the queue's
   batches stay on its executor) and still returns. */
TEST(waiter_on_another_devices_signal_helps_nobody) {
#if TEST_HAVE_THREADS
    where_rig r;
    accel_device* other;
    accel_signal* s2;
    int there = 0;
    if (!where_rig_open(&r, 2)) return;
    REQUIRE_OK(test_device_create(&other));
    REQUIRE_OK(accel_signal_create(other, 0, &s2));
    for (uint64_t i = 1; i <= 10; i++) {
        uintptr_t w = 0;
        help_sleep_ms(3);
        accel_queue_exec(r.q, r.p, &r.buf, 1, NULL, 0, accel_exec_1d(1, 1));
        accel_queue_signal(r.q, s2, i);
        CHECK_OK(accel_queue_submit(r.q));
        CHECK_OK(accel_signal_wait(s2, i, ACCEL_WAIT_FOREVER));
        CHECK_OK(accel_buffer_read(r.buf, 0, &w, sizeof w));
        there += w != help_this_thread();
    }
    CHECK_EQ_INT(there, 10);
    accel_device_destroy(r.dev);
    accel_device_destroy(other);
#else
    SKIP("no threads");
#endif
}

#if TEST_HAVE_THREADS
static atomic_int hold_flag, hold_in;
static uintptr_t hold_where;
static void k_hold(const accel_dispatch* d) {
    (void)d;
    hold_where = help_this_thread();
    atomic_store(&hold_in, 1);
    while (!atomic_load(&hold_flag)) help_sleep_ms(1);
}
typedef struct fd_arg { accel_queue* q; accel_signal* gate; } fd_arg;
static void fail_then_destroy_main(void* p) {
    fd_arg* a = (fd_arg*)p;
    while (!atomic_load(&hold_in)) help_sleep_ms(1);
    accel_signal_fail(a->gate, ACCEL_ERROR_BACKEND);   /* the later batch's wait */
    help_sleep_ms(5);
    atomic_store(&hold_flag, 1);
    accel_queue_destroy(a->q);                          /* waits for the helper's batch, and the rest */
}
#endif

/* Failure and destroy while a waiter runs a batch: the helper's kernel holds on; another thread fails
   the gate a later batch waits for and destroys the queue. The helper's signal is reached, the later
   batch's signal fails, the destroy waits for both and returns. */
TEST(failure_and_destroy_while_a_waiter_runs_a_batch) {
#if TEST_HAVE_THREADS
    accel_device* dev;
    accel_queue* q;
    accel_signal *gate, *first, *second;
    accel_program* p;
    test_thread th;
    fd_arg fa;
    int ran_on_host = 0;
    for (int round = 0; round < 8; round++) {
        atomic_store(&hold_flag, 0);
        atomic_store(&hold_in, 0);
        REQUIRE_OK(test_device_create(&dev));
        REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
        REQUIRE_OK(accel_signal_create(dev, 0, &gate));
        REQUIRE_OK(accel_signal_create(dev, 0, &first));
        REQUIRE_OK(accel_signal_create(dev, 0, &second));
        REQUIRE_OK(accel_program_create(dev, &(accel_program_desc){ .name = "hold", .cpu = k_hold }, &p));
        help_sleep_ms(3);
        accel_queue_exec(q, p, NULL, 0, NULL, 0, accel_exec_1d(1, 1));
        accel_queue_signal(q, first, 1);
        CHECK_OK(accel_queue_submit(q));
        accel_queue_wait(q, gate, 1);
        accel_queue_signal(q, second, 1);
        CHECK_OK(accel_queue_submit(q));
        fa.q = q;
        fa.gate = gate;
        REQUIRE(test_thread_start(&th, fail_then_destroy_main, &fa));
        CHECK_OK(accel_signal_wait(first, 1, ACCEL_WAIT_FOREVER));
        CHECK_RESULT(accel_signal_wait(second, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
        test_thread_join(&th);
        ran_on_host += hold_where == help_this_thread();
        CHECK_EQ_U64(accel_signal_value(first), 1);
        accel_device_destroy(dev);
    }
    if (ran_on_host == 0) fprintf(stderr, "    note: the executor ran every one (no helping seen)\n");
#else
    SKIP("no threads");
#endif
}

/* A helper stops right after the signal command that reached its value, inside a batch too: the next
   command of that batch waits for something the waiter does only once its wait returned. */
TEST(helper_stops_right_after_the_signal_it_waits_for) {
#if TEST_HAVE_THREADS
    accel_device* dev;
    accel_queue* q;
    accel_signal* s;
    accel_program* hold;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    REQUIRE_OK(accel_program_create(dev, &(accel_program_desc){ .name = "hold", .cpu = k_hold }, &hold));
    for (uint64_t i = 1; i <= 10; i++) {
        atomic_store(&hold_flag, 0);
        help_sleep_ms(3);
        accel_queue_signal(q, s, i);
        accel_queue_exec(q, hold, NULL, 0, NULL, 0, accel_exec_1d(1, 1));   /* holds until the flag */
        CHECK_OK(accel_queue_submit(q));
        CHECK_OK(accel_signal_wait(s, i, ACCEL_WAIT_FOREVER));
        atomic_store(&hold_flag, 1);
        CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    }
    accel_device_destroy(dev);
#else
    SKIP("no threads");
#endif
}

#if TEST_HAVE_THREADS
/* A few round trips whose waits help (the executor sleeps, so the waiter takes the turn first, nearly
   every time): the queue's executor then leaves new batches to waiting threads. */
static void helped_trips(where_rig* r, uint64_t* v) {
    for (int i = 0; i < 4; i++) {
        help_sleep_ms(3);   /* longer than ACCEL_CPU_SPIN_NS: the executor sleeps */
        accel_queue_exec(r->q, r->p, &r->buf, 1, NULL, 0, accel_exec_1d(1, 1));
        accel_queue_signal(r->q, r->s, ++*v);
        CHECK_OK(accel_queue_submit(r->q));
        CHECK_OK(accel_signal_wait(r->s, *v, ACCEL_WAIT_FOREVER));
    }
}
/* One exec + signal submitted; returns its value. */
static uint64_t where_submit(where_rig* r, uint64_t* v) {
    accel_queue_exec(r->q, r->p, &r->buf, 1, NULL, 0, accel_exec_1d(1, 1));
    accel_queue_signal(r->q, r->s, ++*v);
    CHECK_OK(accel_queue_submit(r->q));
    return *v;
}
static uintptr_t where_ran(where_rig* r) {
    uintptr_t w = 0;
    CHECK_OK(accel_buffer_read(r->buf, 0, &w, sizeof w));
    return w;
}
#endif

#if TEST_HAVE_THREADS
/* A host call that waits for what the waiting thread does after its wait (here: sets `gate`). */
typedef struct gate_rig { accel_signal *s, *gate; uint64_t v; atomic_int waited; } gate_rig;
static void gate_host_call(void* user) { accel_signal_wait(((gate_rig*)user)->gate, 1, ACCEL_WAIT_FOREVER); }
static void gate_setter(void* user) {   /* the waited value comes by another route meanwhile */
    gate_rig* g = (gate_rig*)user;
    help_sleep_ms(50);
    accel_signal_set(g->s, g->v);
}
static void gate_watchdog(void* user) {   /* a wait that did not return in 10 s: released, so the test ends */
    gate_rig* g = (gate_rig*)user;
    for (int i = 0; i < 1000 && !atomic_load(&g->waited); i++) help_sleep_ms(10);
    if (!atomic_load(&g->waited)) accel_signal_set(g->gate, 1);
}
#endif
/* A helping wait leaves a host call to the executor: the host call may wait (as here) for what the
   waiting thread does once its wait returned, and the value waited for comes by another route (a host
   set) while the batch is held up there. Run on the waiting thread, the host call held the wait for ever. */
TEST(a_helping_wait_leaves_host_calls_to_the_executor) {
#if TEST_HAVE_THREADS
    where_rig r;
    gate_rig g;
    test_thread setter, watchdog;
    uint64_t v = 0, t0, took;
    if (!where_rig_open(&r, 2)) return;
    helped_trips(&r, &v);   /* waits help this queue from now on */
    memset(&g, 0, sizeof g);
    atomic_init(&g.waited, 0);
    g.s = r.s;
    g.v = v + 1;
    REQUIRE_OK(accel_signal_create(r.dev, 0, &g.gate));
    accel_queue_host_call(r.q, gate_host_call, &g);
    accel_queue_signal(r.q, r.s, v + 2);
    CHECK_OK(accel_queue_submit(r.q));
    REQUIRE(test_thread_start(&setter, gate_setter, &g));
    REQUIRE(test_thread_start(&watchdog, gate_watchdog, &g));
    t0 = test_now_ns();
    CHECK_OK(accel_signal_wait(r.s, v + 1, ACCEL_WAIT_FOREVER));
    took = test_now_ns() - t0;
    atomic_store(&g.waited, 1);
    if (!CHECK(took < 8000000000ull)) fprintf(stderr, "    the wait took %.2f s\n", (double)took / 1e9);
    CHECK_OK(accel_signal_set(g.gate, 1));
    test_thread_join(&setter);
    test_thread_join(&watchdog);
    CHECK_OK(accel_queue_finish(r.q, ACCEL_WAIT_FOREVER));
    CHECK_EQ_U64(accel_signal_value(r.s), v + 2);
    accel_device_destroy(r.dev);
#else
    SKIP("no threads: waits run parked work already");
#endif
}

#if TEST_HAVE_THREADS
static void k_sleep_100ms(const accel_dispatch* d) { (void)d; help_sleep_ms(100); }
static void late_setter(void* user) {   /* the value waited for comes by another route at ~45 ms */
    gate_rig* g = (gate_rig*)user;
    help_sleep_ms(45);
    accel_signal_set(g->s, g->v);
}
#endif
/* A helping wait stops after the kernel it runs once its value came by another route meanwhile
   ("a kernel it runs returns first"): it ran the whole batch of five 100 ms kernels (500 ms) before; a
   loaded machine's late setter still lands in the first or second kernel. */
TEST(a_helping_wait_stops_after_a_kernel_once_its_value_came) {
#if TEST_HAVE_THREADS
    where_rig r;
    gate_rig g;
    test_thread setter;
    accel_program* slow;
    uint64_t v = 0, t0, took;
    if (!where_rig_open(&r, 2)) return;
    REQUIRE_OK(accel_program_create(r.dev, &(accel_program_desc){ .name = "100 ms", .cpu = k_sleep_100ms }, &slow));
    helped_trips(&r, &v);   /* waits help this queue from now on */
    memset(&g, 0, sizeof g);
    g.s = r.s;
    g.v = v + 1;
    for (int i = 0; i < 5; i++) accel_queue_exec(r.q, slow, NULL, 0, NULL, 0, accel_exec_1d(1, 1));
    accel_queue_signal(r.q, r.s, v + 2);
    CHECK_OK(accel_queue_submit(r.q));
    REQUIRE(test_thread_start(&setter, late_setter, &g));
    t0 = test_now_ns();
    CHECK_OK(accel_signal_wait(r.s, v + 1, ACCEL_WAIT_FOREVER));
    took = test_now_ns() - t0;
    if (!CHECK(took < 350000000ull)) fprintf(stderr, "    the wait took %.0f ms\n", (double)took / 1e6);
    test_thread_join(&setter);
    CHECK_OK(accel_queue_finish(r.q, ACCEL_WAIT_FOREVER));
    CHECK_EQ_U64(accel_signal_value(r.s), v + 2);   /* the executor ran the rest */
    accel_device_destroy(r.dev);
#else
    SKIP("no threads: waits run parked work already");
#endif
}

/* After waits that helped, the executor leaves new batches to waiting threads: batches that no thread
   helps with still run, on the executor: one the host only polls for, one a wait with a timeout waits
   for, one a finish with a timeout waits for, and one another queue's wait command waits for (the host
   helps that other queue, whose batch cannot go on). */
TEST(batches_nobody_helps_still_run_after_helping) {
#if TEST_HAVE_THREADS
    where_rig r;
    accel_queue* other;
    accel_signal* done;
    uint64_t v = 0;
    REQUIRE(where_rig_open(&r, 2));
    REQUIRE_OK(accel_queue_create(r.dev, ACCEL_QUEUE_COMPUTE, &other));
    REQUIRE_OK(accel_signal_create(r.dev, 0, &done));
    for (uint64_t round = 1; round <= 10 && !TEST_FAILED_SO_FAR(); round++) {
        uint64_t want;
        int polls = 0;
        helped_trips(&r, &v);
        want = where_submit(&r, &v);
        while (accel_signal_value(r.s) < want && polls++ < 10000) help_sleep_ms(1);   /* 10 s at most */
        CHECK_EQ_U64(accel_signal_value(r.s), want);
        CHECK(where_ran(&r) != help_this_thread());
        helped_trips(&r, &v);
        want = where_submit(&r, &v);
        CHECK_OK(accel_signal_wait(r.s, want, 10000000000ull));
        CHECK(where_ran(&r) != help_this_thread());
        helped_trips(&r, &v);
        where_submit(&r, &v);
        CHECK_OK(accel_queue_finish(r.q, 10000000000ull));
        CHECK(where_ran(&r) != help_this_thread());
        helped_trips(&r, &v);
        want = where_submit(&r, &v);
        accel_queue_wait(other, r.s, want);
        accel_queue_signal(other, done, round);
        CHECK_OK(accel_queue_submit(other));
        CHECK_OK(accel_signal_wait(done, round, ACCEL_WAIT_FOREVER));
        CHECK_EQ_U64(accel_signal_value(r.s), want);
    }
    accel_device_destroy(r.dev);
#else
    SKIP("no threads");
#endif
}

/* After waits that helped, a batch submitted to overlap the host's own work still runs beside it: the
   executor takes it within two of its looks (a quarter of a millisecond, up to a millisecond after
   helped batches: at most ~1.25 ms), not only when the host finally waits (at 4 ms looks it ran at the
   host's wait, every time). The host sleeps 4 ms after
   each submit, then checks that the batch already ran; 3 of 5 must have (a loaded machine may not run
   the executor in time now and then). */
TEST(a_batch_submitted_to_overlap_runs_beside_the_host_after_helping) {
#if TEST_HAVE_THREADS
    where_rig r;
    uint64_t v = 0;
    int early = 0;
    REQUIRE(where_rig_open(&r, 2));
    for (int round = 0; round < 5 && !TEST_FAILED_SO_FAR(); round++) {
        uint64_t want;
        helped_trips(&r, &v);
        want = where_submit(&r, &v);
        help_sleep_ms(4);
        early += accel_signal_value(r.s) >= want;
        CHECK_OK(accel_signal_wait(r.s, want, ACCEL_WAIT_FOREVER));
    }
    if (early < 3) fprintf(stderr, "    %d of 5 batches ran before the host waited\n", early);
    CHECK(early >= 3);
    accel_device_destroy(r.dev);
#else
    SKIP("no threads");
#endif
}

/* While waiting threads run every batch, the executor looks at the queue less and less often, down to
   once a millisecond (accel.h, accel_i_cpu_look_next): on 2 cores, a look every quarter of a
   millisecond took a lane's core 4,000 times a second through a decode loop. The host runs tiny batches
   and waits for each (it runs them itself) for 200 ms; the executor's looks are the only sleeps of the
   other threads then (the pool's lanes sleep: a one-group exec wakes none). At most 400 sleeps: about
   200 with the backoff, about 800 with looks every quarter of a millisecond. Linux (/proc) only. */
TEST(executor_looks_less_often_while_waits_help) {
#if TEST_HAVE_THREAD_SLEEPS
    where_rig r;
    uint64_t v = 0, t0;
    long before, after;
    uint32_t trips = 0;
    REQUIRE(where_rig_open(&r, 2));
    helped_trips(&r, &v);
    if ((before = test_thread_sleeps(NULL)) < 0) { accel_device_destroy(r.dev); SKIP("no /proc/self/task"); }
    t0 = test_now_ns();
    while (test_now_ns() - t0 < 200000000ull && !TEST_FAILED_SO_FAR()) {
        CHECK_OK(accel_signal_wait(r.s, where_submit(&r, &v), ACCEL_WAIT_FOREVER));
        trips++;
    }
    after = test_thread_sleeps(NULL);
    fprintf(stderr, "    %u helped trips in 200 ms; other threads slept %ld times\n", trips, after - before);
    CHECK(after - before <= 400);
    CHECK_EQ_U64(accel_signal_value(r.s), v);
    accel_device_destroy(r.dev);
#else
    SKIP("no threads, or no /proc");
#endif
}

int main(int argc, char** argv) {
    test_begin(argc, argv);
    test_only_backends("cpu", "the CPU backend's waits that help");
    RUN(wait_without_timeout_runs_the_batch_on_the_waiting_thread);
    RUN(helping_waiters_run_every_group_exactly_once);
    RUN(batches_stay_in_order_when_helper_and_executor_alternate);
    RUN(kernel_waiting_on_its_own_queue_times_out);
    RUN(a_kernel_that_waits_never_runs_other_work);
    RUN(waiter_on_another_devices_signal_helps_nobody);
    RUN(failure_and_destroy_while_a_waiter_runs_a_batch);
    RUN(helper_stops_right_after_the_signal_it_waits_for);
    RUN(a_helping_wait_stops_after_a_kernel_once_its_value_came);
    RUN(batches_nobody_helps_still_run_after_helping);
    RUN(a_helping_wait_leaves_host_calls_to_the_executor);
    RUN(a_batch_submitted_to_overlap_runs_beside_the_host_after_helping);
    RUN(executor_looks_less_often_while_waits_help);
    return test_end();
}
