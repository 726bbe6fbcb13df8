/* tests/test_stress.c — many threads, many batches: no lost or duplicated signal values, no lost
   work, release/acquire between queues, concurrent object creation.
   Env ACCEL_TEST_STRESS_SCALE (percent, default 100) scales the iteration counts (e.g. 10 under TSan). */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test.h"
#include "kernels.h"

static uint32_t stress_scaled(uint32_t n) {
    const char* e = getenv("ACCEL_TEST_STRESS_SCALE");
    long pct = e && e[0] ? strtol(e, NULL, 10) : 100;
    if (pct <= 0) pct = 100;
    uint64_t v = (uint64_t)n * (uint64_t)pct / 100u;
    return v < 1 ? 1 : (uint32_t)v;
}

/* ==== 8 host threads, each its own queue, 10,000 batches each ==== */
enum { STRESS_THREADS = 8 };
typedef struct driver_arg {
    accel_device* dev;
    accel_program *add, *fill;
    uint32_t batches, index;
    accel_queue* q;
    accel_signal* s;
    accel_buffer* buf;            /* 64 words */
    uint32_t wait_failures, value_mismatch, execs;
    accel_result first_error;
} driver_arg;

static void driver_run(driver_arg* a) {
    uint32_t n = 64;
    for (uint32_t k = 1; k <= a->batches; k++) {
        if (k % 97 == 0) {
            accel_queue_exec(a->q, a->add, &a->buf, 1, &n, 1, accel_exec_1d(64, 16));
            a->execs++;
        }
        if (k % 251 == 0) accel_queue_fill(a->q, a->buf, 64 * 4 - 4, 4, k);     /* last word = k */
        accel_queue_signal(a->q, a->s, k);
        accel_result r = accel_queue_submit(a->q);
        if (r == ACCEL_OK) r = accel_signal_wait(a->s, k, ACCEL_WAIT_FOREVER);
        if (r != ACCEL_OK) {
            if (!a->wait_failures++) a->first_error = r;
            continue;
        }
        uint64_t v = accel_signal_value(a->s);
        if (v != k) a->value_mismatch++;      /* only this queue signals s: exactly k, never more */
    }
}
#if TEST_HAVE_THREADS
static void driver_main(void* p) { driver_run((driver_arg*)p); }
#endif

static void stress_queues(int use_threads) {
    accel_device* dev;
    accel_program *add, *fill;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(test_program_create(dev, TK_ADD_ONE, &add));
    REQUIRE_OK(test_program_create(dev, TK_FILL_INDEX, &fill));
    driver_arg args[STRESS_THREADS];
    uint32_t batches = stress_scaled(10000);
    for (uint32_t i = 0; i < STRESS_THREADS; i++) {
        memset(&args[i], 0, sizeof args[i]);
        args[i].dev = dev;
        args[i].add = add;
        args[i].fill = fill;
        args[i].batches = batches;
        args[i].index = i;
        REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &args[i].q));
        REQUIRE_OK(accel_signal_create(dev, 0, &args[i].s));
        REQUIRE_OK(test_buffer_create(dev, 64 * 4, ACCEL_MEMORY_DEVICE, &args[i].buf));
    }
#if TEST_HAVE_THREADS
    if (use_threads) {
        test_thread th[STRESS_THREADS];
        int started[STRESS_THREADS];
        for (uint32_t i = 0; i < STRESS_THREADS; i++) started[i] = test_thread_start(&th[i], driver_main, &args[i]);
        for (uint32_t i = 0; i < STRESS_THREADS; i++) {
            if (started[i]) test_thread_join(&th[i]);
            else driver_run(&args[i]);
        }
    } else
#endif
    {
        (void)use_threads;
        for (uint32_t i = 0; i < STRESS_THREADS; i++) driver_run(&args[i]);
    }
    for (uint32_t i = 0; i < STRESS_THREADS; i++) {
        driver_arg* a = &args[i];
        if (!CHECK_EQ_INT(a->wait_failures, 0)) fprintf(stderr, "    thread %u: first error %s\n", i, accel_result_string(a->first_error));
        CHECK_EQ_INT(a->value_mismatch, 0);
        CHECK_EQ_U64(accel_signal_value(a->s), batches);
        CHECK_OK(accel_queue_finish(a->q, ACCEL_WAIT_FOREVER));
        uint32_t got[64];
        CHECK_OK(accel_buffer_read(a->buf, 0, got, sizeof got));
        uint32_t last_fill = batches / 251 * 251;
        uint32_t adds_after_fill = 0;
        for (uint32_t k = last_fill + 1; k <= batches; k++) adds_after_fill += k % 97 == 0;
        for (int w = 0; w < 63; w++) CHECK_EQ_U64(got[w], a->execs);
        CHECK_EQ_U64(got[63], (uint64_t)last_fill + adds_after_fill);
        if (TEST_FAILED_SO_FAR()) break;
    }
    accel_device_destroy(dev);
}

TEST(stress_8_threads_10000_batches) {
#if TEST_HAVE_THREADS
    stress_queues(1);
#else
    SKIP("no threads");
#endif
}

TEST(stress_8_queues_one_thread) {
    stress_queues(0);
}

/* ==== producer/consumer pipeline on two queues, driven by two host threads ====
   producer queue: wait(free, k - RING) ; update slot k % RING with k ; signal(full, k)
   consumer queue: wait(full, k) ; copy slot -> out[k % RING] ; add_one on out slot ... ; signal(free, k)
   The host checks at the end that every slot holds its last value + 1, and every value came through. */
enum { RING = 8, SLOT_WORDS = 64 };
typedef struct pipe_ctx {
    accel_device* dev;
    accel_queue *prod_q, *cons_q;
    accel_signal *full, *free_;
    accel_buffer *ring, *out, *sum;
    accel_program* add;
    uint32_t n;
    accel_result prod_err, cons_err;
} pipe_ctx;

static void pipe_producer(void* p) {
    pipe_ctx* c = (pipe_ctx*)p;
    uint32_t words[SLOT_WORDS];
    for (uint32_t k = 1; k <= c->n; k++) {
        for (int w = 0; w < SLOT_WORDS; w++) words[w] = k * 1000u + (uint32_t)w;
        if (k > RING) accel_queue_wait(c->prod_q, c->free_, k - RING);
        accel_queue_update(c->prod_q, c->ring, (size_t)(k % RING) * SLOT_WORDS * 4, words, sizeof words);
        accel_queue_signal(c->prod_q, c->full, k);
        accel_result r = accel_queue_submit(c->prod_q);
        if (r != ACCEL_OK && c->prod_err == ACCEL_OK) c->prod_err = r;
    }
}
static void pipe_consumer(void* p) {
    pipe_ctx* c = (pipe_ctx*)p;
    uint32_t n = SLOT_WORDS;
    for (uint32_t k = 1; k <= c->n; k++) {
        size_t off = (size_t)(k % RING) * SLOT_WORDS * 4;
        accel_queue_wait(c->cons_q, c->full, k);
        accel_queue_copy(c->cons_q, c->out, off, c->ring, off, SLOT_WORDS * 4);
        accel_queue_signal(c->cons_q, c->free_, k);
        accel_queue_exec(c->cons_q, c->add, &c->sum, 1, &n, 1, accel_exec_1d(SLOT_WORDS, 16));
        accel_result r = accel_queue_submit(c->cons_q);
        if (r != ACCEL_OK && c->cons_err == ACCEL_OK) c->cons_err = r;
    }
}

TEST(stress_pipeline_two_queues) {
    pipe_ctx c;
    memset(&c, 0, sizeof c);
    c.n = stress_scaled(3000);
    REQUIRE_OK(test_device_create(&c.dev));
    REQUIRE_OK(accel_queue_create(c.dev, ACCEL_QUEUE_COPY, &c.prod_q));
    REQUIRE_OK(accel_queue_create(c.dev, ACCEL_QUEUE_COMPUTE, &c.cons_q));
    REQUIRE_OK(accel_signal_create(c.dev, 0, &c.full));
    REQUIRE_OK(accel_signal_create(c.dev, 0, &c.free_));
    REQUIRE_OK(test_buffer_create(c.dev, RING * SLOT_WORDS * 4, ACCEL_MEMORY_DEVICE, &c.ring));
    REQUIRE_OK(test_buffer_create(c.dev, RING * SLOT_WORDS * 4, ACCEL_MEMORY_HOST, &c.out));
    REQUIRE_OK(test_buffer_create(c.dev, SLOT_WORDS * 4, ACCEL_MEMORY_DEVICE, &c.sum));
    REQUIRE_OK(test_program_create(c.dev, TK_ADD_ONE, &c.add));
#if TEST_HAVE_THREADS
    test_thread tp, tc;
    REQUIRE(test_thread_start(&tp, pipe_producer, &c));
    if (!test_thread_start(&tc, pipe_consumer, &c)) pipe_consumer(&c);
    else test_thread_join(&tc);
    test_thread_join(&tp);
#else
    pipe_consumer(&c);      /* consumers park; the producer's signals run them */
    pipe_producer(&c);
#endif
    CHECK_OK(c.prod_err);
    CHECK_OK(c.cons_err);
    CHECK_OK(accel_signal_wait(c.free_, c.n, ACCEL_WAIT_FOREVER));
    CHECK_OK(accel_queue_finish(c.cons_q, ACCEL_WAIT_FOREVER));
    CHECK_OK(accel_queue_finish(c.prod_q, ACCEL_WAIT_FOREVER));
    CHECK_EQ_U64(accel_signal_value(c.full), c.n);
    CHECK_EQ_U64(accel_signal_value(c.free_), c.n);
    static uint32_t got[RING * SLOT_WORDS];
    REQUIRE_OK(accel_buffer_read(c.out, 0, got, sizeof got));
    int bad = 0;
    for (uint32_t slot = 0; slot < RING; slot++) {
        /* the last k <= n with k % RING == slot */
        uint32_t k = c.n - ((c.n - slot) % RING);
        if (k == 0) continue;
        for (uint32_t w = 0; w < SLOT_WORDS; w++) bad += got[slot * SLOT_WORDS + w] != k * 1000u + w;
    }
    CHECK_EQ_INT(bad, 0);
    uint32_t sum[SLOT_WORDS];
    REQUIRE_OK(accel_buffer_read(c.sum, 0, sum, sizeof sum));
    for (int w = 0; w < SLOT_WORDS; w++) CHECK_EQ_U64(sum[w], c.n);
    accel_device_destroy(c.dev);
}

#if TEST_HAVE_THREADS
/* ==== many waiters on one signal advanced by a queue ==== */
typedef struct many_wait_arg { accel_signal* s; uint32_t n; uint32_t failures; } many_wait_arg;
static void many_wait_main(void* p) {
    many_wait_arg* a = (many_wait_arg*)p;
    for (uint32_t v = 1; v <= a->n; v += 7)
        if (accel_signal_wait(a->s, v, ACCEL_WAIT_FOREVER) != ACCEL_OK) a->failures++;
    if (accel_signal_wait(a->s, a->n, ACCEL_WAIT_FOREVER) != ACCEL_OK) a->failures++;
}

/* ==== concurrent object churn on one device, plus host sets racing on one signal ====
   Queues come and go too: a CPU queue's destroy reads every signal of the device (the queue may be
   the one that sets it), while other threads make signals (TSan found a signal's fields written
   after it was on the device's list: a soak run, 2026-11-28). */
typedef struct churn_arg { accel_device* dev; accel_signal* shared; uint32_t index, n, failures; } churn_arg;
static void churn_main(void* p) {
    churn_arg* a = (churn_arg*)p;
    for (uint32_t i = 0; i < a->n; i++) {
        accel_buffer* b = NULL;
        accel_signal* s = NULL;
        accel_program* prog = NULL;
        if (test_buffer_create(a->dev, 64 + i % 512, (accel_memory)(i & 1), &b) != ACCEL_OK) a->failures++;
        if (accel_signal_create(a->dev, i, &s) != ACCEL_OK) a->failures++;
        if (test_program_create(a->dev, TK_ADD_ONE, &prog) != ACCEL_OK) a->failures++;
        if (accel_signal_value(s) != i) a->failures++;
        if (i % 4 == 0) {   /* a queue made, set s, destroyed: its destroy walks the device's signals */
            accel_queue* q = NULL;
            if (accel_queue_create(a->dev, ACCEL_QUEUE_COMPUTE, &q) != ACCEL_OK) {
                a->failures++;
            } else {
                accel_queue_signal(q, s, (uint64_t)i + 1);
                if (accel_queue_submit(q) != ACCEL_OK ||
                    accel_signal_wait(s, (uint64_t)i + 1, ACCEL_WAIT_FOREVER) != ACCEL_OK)
                    a->failures++;
                accel_queue_destroy(q);
            }
        }
        if (accel_signal_set(a->shared, (uint64_t)i * STRESS_THREADS + a->index) != ACCEL_OK) a->failures++;
        accel_program_destroy(prog);
        accel_signal_destroy(s);
        accel_buffer_destroy(b);
    }
}
#endif

TEST(stress_many_waiters_one_signal) {
#if TEST_HAVE_THREADS
    accel_device* dev;
    accel_queue* q;
    accel_signal* s;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    uint32_t n = stress_scaled(test_sync_validation() ? 300 : 2000);   /* 35 ms a value there */
    many_wait_arg args[STRESS_THREADS];
    test_thread th[STRESS_THREADS];
    int started[STRESS_THREADS];
    for (int i = 0; i < STRESS_THREADS; i++) {
        args[i].s = s;
        args[i].n = n;
        args[i].failures = 0;
        started[i] = test_thread_start(&th[i], many_wait_main, &args[i]);
    }
    for (uint32_t v = 1; v <= n; v++) {
        accel_queue_signal(q, s, v);
        if (v % 4 == 0 || v == n) CHECK_OK(accel_queue_submit(q));
    }
    for (int i = 0; i < STRESS_THREADS; i++) {
        if (started[i]) test_thread_join(&th[i]);
        CHECK_EQ_INT(args[i].failures, 0);
    }
    CHECK_EQ_U64(accel_signal_value(s), n);
    accel_device_destroy(dev);
#else
    SKIP("no threads");
#endif
}

TEST(stress_concurrent_object_churn) {
#if TEST_HAVE_THREADS
    accel_device* dev;
    accel_signal* shared;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_signal_create(dev, 0, &shared));
    churn_arg args[STRESS_THREADS];
    test_thread th[STRESS_THREADS];
    int started[STRESS_THREADS];
    uint32_t n = stress_scaled(300);
    for (uint32_t i = 0; i < STRESS_THREADS; i++) {
        args[i].dev = dev;
        args[i].shared = shared;
        args[i].index = i;
        args[i].n = n;
        args[i].failures = 0;
        started[i] = test_thread_start(&th[i], churn_main, &args[i]);
    }
    for (uint32_t i = 0; i < STRESS_THREADS; i++) {
        if (started[i]) test_thread_join(&th[i]);
        else churn_main(&args[i]);
        CHECK_EQ_INT(args[i].failures, 0);
    }
    /* max of all sets: the last i of the highest index thread */
    CHECK_EQ_U64(accel_signal_value(shared), (uint64_t)(n - 1) * STRESS_THREADS + STRESS_THREADS - 1);
    accel_device_destroy(dev);
#else
    SKIP("no threads");
#endif
}

/* ==== one queue: batches gated on the host among batches walked inside accel_queue_submit ==== */
/* Every third batch waits for a host signal that another thread raises meanwhile (GPU backends: the
   worker gates it, and the raiser's accel_signal_set walks it), the others go straight in, so the
   submitting thread, the worker and the raiser hand the queue's walk around thousands of times. Batch k
   copies word 0 to word 1 + k, then fills word 0 with k + 1: in queue order word 1 + k holds k, for
   every k, and the queue's signal reaches the count once. */
typedef struct gated_arg { accel_signal* gate; uint64_t top; } gated_arg;
#if TEST_HAVE_THREADS
static void gated_raiser(void* p) {
    gated_arg* a = (gated_arg*)p;
    for (uint64_t g = 1; g <= a->top; g++) {
        uint64_t t0 = accel_host_time_ns(), pause = (g % 7) * 20000u;   /* raises at varying paces */
        while (accel_host_time_ns() - t0 < pause) { }
        accel_signal_set(a->gate, g);
    }
}
#endif
TEST(stress_gated_batches_keep_order) {
#if TEST_HAVE_THREADS
    enum { WORDS_MAX = 1 + 3000 };
    uint32_t n = stress_scaled(3000), bad = 0;
    accel_device* dev;
    accel_queue* q;
    accel_signal *gate, *done;
    accel_buffer* buf;
    gated_arg ga;
    test_thread raiser;
    uint32_t* got;
    /* under synchronization validation every semaphore call takes one lock of the layer's, which it may
       hold while it sleeps (see test_signals.c): fewer batches, or the test takes minutes */
    if (test_sync_validation()) n = n < 150 ? n : 150;
    if (n > WORDS_MAX - 1) n = WORDS_MAX - 1;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(dev, 0, &done));
    REQUIRE_OK(test_buffer_create(dev, (size_t)(n + 1) * 4, ACCEL_MEMORY_DEVICE, &buf));
    accel_queue_fill(q, buf, 0, (size_t)(n + 1) * 4, 0);
    REQUIRE_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    ga.gate = gate;
    ga.top = (n + 2) / 3;
    REQUIRE(test_thread_start(&raiser, gated_raiser, &ga));
    for (uint32_t k = 0; k < n; k++) {
        if (k % 3 == 0) accel_queue_wait(q, gate, k / 3 + 1);
        accel_queue_copy(q, buf, 4 * (size_t)(1 + k), buf, 0, 4);
        accel_queue_fill(q, buf, 0, 4, k + 1);
        accel_queue_signal(q, done, k + 1);
        if (!CHECK_OK(accel_queue_submit(q))) break;
    }
    test_thread_join(&raiser);
    CHECK_OK(accel_signal_wait(done, n, 60ull * 1000000000ull));
    CHECK_EQ_U64(accel_signal_value(done), n);
    got = (uint32_t*)malloc((size_t)(n + 1) * 4);
    REQUIRE(got != NULL);
    CHECK_OK(accel_buffer_read(buf, 0, got, (size_t)(n + 1) * 4));
    for (uint32_t k = 0; k < n; k++) bad += got[1 + k] != k;
    CHECK_EQ_U64(got[0], n);
    CHECK_EQ_INT(bad, 0);
    free(got);
    accel_device_destroy(dev);
#else
    SKIP("no threads");
#endif
}

int main(int argc, char** argv) {
    test_begin(argc, argv);
    RUN(stress_8_threads_10000_batches);
    RUN(stress_8_queues_one_thread);
    RUN(stress_pipeline_two_queues);
    RUN(stress_many_waiters_one_signal);
    RUN(stress_concurrent_object_churn);
    RUN(stress_gated_batches_keep_order);
    return test_end();
}
