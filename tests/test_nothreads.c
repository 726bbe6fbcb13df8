/* tests/test_nothreads.c — ACCEL_NO_THREADS semantics: batches run inside submit, parked batches run
   when a signal unblocks them, impossible waits report ACCEL_ERROR_DEADLOCK at once.
   Built without ACCEL_NO_THREADS (and not on WASI), every test here is skipped. */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test.h"
#include "kernels.h"

#if defined(ACCEL_NO_THREADS) || defined(__wasi__)
#  define NT_ACTIVE 1
#else
#  define NT_ACTIVE 0
#endif
#define NT_ONLY() do { if (!NT_ACTIVE) SKIP("built with threads (define ACCEL_NO_THREADS)"); } while (0)

TEST(nt_submit_runs_batch_inline) {
    NT_ONLY();
    accel_device* dev;
    accel_queue* q;
    accel_buffer* b;
    accel_program* p;
    accel_signal* s;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(test_buffer_create(dev, 400, ACCEL_MEMORY_HOST, &b));
    REQUIRE_OK(test_program_create(dev, TK_FILL_INDEX, &p));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    uint32_t k[2] = { 10, 100 };
    accel_queue_exec(q, p, &b, 1, k, 2, accel_exec_1d(100, 16));
    accel_queue_signal(q, s, 1);
    CHECK_OK(accel_queue_submit(q));
    /* no wait at all: it already ran */
    CHECK_EQ_U64(accel_signal_value(s), 1);
    CHECK_EQ_U64(test_buffer_u32(b, 99), 109);
    accel_device_destroy(dev);
}

TEST(nt_cpu_threads_is_one) {
    NT_ONLY();
    if (!test_backend_is_cpu()) SKIP("CPU backend only");
    accel_device* dev;
    accel_device_desc d;
    memset(&d, 0, sizeof d);
    d.cpu_threads = 8;
    REQUIRE_OK(test_device_create_desc(d, &dev));
    accel_queue* q;
    accel_program* p;
    accel_buffer* b;
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(test_program_create(dev, TK_PROBE, &p));
    REQUIRE_OK(test_buffer_create(dev, (16 + 32) * 4, ACCEL_MEMORY_HOST, &b));
    uint32_t c0 = 0;
    accel_queue_exec(q, p, &b, 1, &c0, 1, accel_exec_1d(32, 1));
    CHECK_OK(accel_queue_submit(q));
    for (int g = 0; g < 32; g++) CHECK_EQ_U64(test_buffer_u32(b, 16 + (size_t)g), 1);   /* worker 0 */
    accel_device_destroy(dev);
}

TEST(nt_parked_batch_runs_on_host_set) {
    NT_ONLY();
    accel_device* dev;
    accel_queue* q;
    accel_buffer* b;
    accel_signal *gate, *s;
    if (!test_queue_scene(64, &dev, &q, &b, &gate, &s)) { accel_device_destroy(dev); return; }
    accel_queue_fill(q, b, 0, 4, 1);                 /* before the wait: runs in submit */
    accel_queue_wait(q, gate, 2);
    accel_queue_fill(q, b, 4, 4, 2);
    accel_queue_signal(q, s, 1);
    CHECK_OK(accel_queue_submit(q));
    CHECK_EQ_U64(test_buffer_u32(b, 0), 1);
    CHECK_EQ_U64(test_buffer_u32(b, 1), 0);
    CHECK_EQ_U64(accel_signal_value(s), 0);
    /* nothing can unblock it: waits say so instead of hanging */
    uint64_t t0 = test_now_ns();
    CHECK_RESULT(accel_signal_wait(s, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_DEADLOCK);
    CHECK_RESULT(accel_signal_wait(s, 1, 5000000000ull), ACCEL_ERROR_DEADLOCK);
    CHECK(test_now_ns() - t0 < 1000000000ull);       /* at once, not after the timeout */
    CHECK_RESULT(accel_signal_wait(s, 1, 0), ACCEL_TIMEOUT);
    CHECK_RESULT(accel_queue_finish(q, ACCEL_WAIT_FOREVER), ACCEL_ERROR_DEADLOCK);
    CHECK_RESULT(accel_queue_finish(q, 1000000), ACCEL_ERROR_DEADLOCK);
    CHECK_RESULT(accel_queue_finish(q, 0), ACCEL_TIMEOUT);
    /* a set below the awaited value does not run it */
    CHECK_OK(accel_signal_set(gate, 1));
    CHECK_EQ_U64(accel_signal_value(s), 0);
    CHECK_EQ_U64(test_buffer_u32(b, 1), 0);
    /* the set that reaches it runs it before returning */
    CHECK_OK(accel_signal_set(gate, 2));
    CHECK_EQ_U64(accel_signal_value(s), 1);
    CHECK_EQ_U64(test_buffer_u32(b, 1), 2);
    CHECK_OK(accel_signal_wait(s, 1, ACCEL_WAIT_FOREVER));
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    accel_device_destroy(dev);
}

/* A later batch of the same queue stays behind a parked one (in order), even with no wait of its own. */
TEST(nt_parked_batch_keeps_queue_order) {
    NT_ONLY();
    accel_device* dev;
    accel_queue* q;
    accel_buffer* b;
    accel_signal *gate, *s;
    if (!test_queue_scene(16, &dev, &q, &b, &gate, &s)) { accel_device_destroy(dev); return; }
    accel_queue_wait(q, gate, 1);
    accel_queue_fill(q, b, 0, 4, 1);
    CHECK_OK(accel_queue_submit(q));
    accel_queue_fill(q, b, 0, 4, 2);
    accel_queue_signal(q, s, 1);
    CHECK_OK(accel_queue_submit(q));
    CHECK_EQ_U64(test_buffer_u32(b, 0), 0);
    CHECK_EQ_U64(accel_signal_value(s), 0);
    CHECK_OK(accel_signal_set(gate, 1));
    CHECK_EQ_U64(test_buffer_u32(b, 0), 2);
    CHECK_EQ_U64(accel_signal_value(s), 1);
    accel_device_destroy(dev);
}

/* Parked batches unblocked by a queue's signal, in a chain across queues (and a second device). */
TEST(nt_chain_across_queues) {
    NT_ONLY();
    accel_device *dev, *dev2;
    accel_queue *q1, *q2, *q3;
    accel_buffer* b;
    accel_signal *h, *a, *c, *d;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(test_device_create(&dev2));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q1));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COPY, &q2));
    REQUIRE_OK(accel_queue_create(dev2, ACCEL_QUEUE_COMPUTE, &q3));
    REQUIRE_OK(test_buffer_create(dev, 16, ACCEL_MEMORY_HOST, &b));
    REQUIRE_OK(accel_signal_create(dev, 0, &h));
    REQUIRE_OK(accel_signal_create(dev, 0, &a));
    REQUIRE_OK(accel_signal_create(dev, 0, &c));
    REQUIRE_OK(accel_signal_create(dev2, 0, &d));
    /* submitted last-to-first */
    accel_queue_wait(q3, c, 1);
    accel_queue_signal(q3, d, 1);
    CHECK_OK(accel_queue_submit(q3));
    accel_queue_wait(q2, a, 1);
    accel_queue_fill(q2, b, 4, 4, 22);
    accel_queue_signal(q2, c, 1);
    CHECK_OK(accel_queue_submit(q2));
    accel_queue_wait(q1, h, 1);
    accel_queue_fill(q1, b, 0, 4, 11);
    accel_queue_signal(q1, a, 1);
    CHECK_OK(accel_queue_submit(q1));
    CHECK_EQ_U64(accel_signal_value(d), 0);
    CHECK_RESULT(accel_signal_wait(d, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_DEADLOCK);
    CHECK_OK(accel_signal_set(h, 1));
    CHECK_EQ_U64(accel_signal_value(a), 1);
    CHECK_EQ_U64(accel_signal_value(c), 1);
    CHECK_EQ_U64(accel_signal_value(d), 1);
    CHECK_EQ_U64(test_buffer_u32(b, 0), 11);
    CHECK_EQ_U64(test_buffer_u32(b, 1), 22);
    accel_device_destroy(dev2);
    accel_device_destroy(dev);
}

/* A wait whose value an already parked batch will reach is not a deadlock: the batch is runnable. */
TEST(nt_wait_satisfiable_by_parked_work) {
    NT_ONLY();
    accel_device* dev;
    accel_queue *q1, *q2;
    accel_signal *a, *s;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q1));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q2));
    REQUIRE_OK(accel_signal_create(dev, 0, &a));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    accel_queue_wait(q1, a, 1);
    accel_queue_signal(q1, s, 1);
    CHECK_OK(accel_queue_submit(q1));
    accel_queue_signal(q2, a, 1);          /* runs at submit and unblocks q1 */
    CHECK_OK(accel_queue_submit(q2));
    CHECK_EQ_U64(accel_signal_value(s), 1);
    CHECK_OK(accel_signal_wait(s, 1, ACCEL_WAIT_FOREVER));
    accel_device_destroy(dev);
}

TEST(nt_wait_many_deadlock) {
    NT_ONLY();
    accel_device* dev;
    accel_signal* s[2];
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_signal_create(dev, 0, &s[0]));
    REQUIRE_OK(accel_signal_create(dev, 5, &s[1]));
    uint64_t v[2] = { 1, 6 };
    CHECK_RESULT(accel_signal_wait_many(s, v, 2, false, ACCEL_WAIT_FOREVER, NULL), ACCEL_ERROR_DEADLOCK);
    CHECK_RESULT(accel_signal_wait_many(s, v, 2, true, 1000, NULL), ACCEL_ERROR_DEADLOCK);
    CHECK_RESULT(accel_signal_wait_many(s, v, 2, false, 0, NULL), ACCEL_TIMEOUT);
    v[1] = 5;
    uint32_t first = 9;
    CHECK_OK(accel_signal_wait_many(s, v, 2, false, ACCEL_WAIT_FOREVER, &first));
    CHECK_EQ_INT(first, 1);
    CHECK_RESULT(accel_signal_wait_many(s, v, 2, true, ACCEL_WAIT_FOREVER, NULL), ACCEL_ERROR_DEADLOCK);
    accel_device_destroy(dev);
}

/* Failing the signal a parked batch waits on drops it and fails what it would signal, right away. */
TEST(nt_fail_parked_batch) {
    NT_ONLY();
    accel_device* dev;
    accel_queue* q;
    accel_buffer* b;
    accel_signal *gate, *s, *later;
    if (!test_queue_scene(16, &dev, &q, &b, &gate, &s)) { accel_device_destroy(dev); return; }
    REQUIRE_OK(accel_signal_create(dev, 0, &later));
    accel_queue_wait(q, gate, 1);
    accel_queue_fill(q, b, 0, 4, 5);
    accel_queue_signal(q, s, 1);
    CHECK_OK(accel_queue_submit(q));
    accel_queue_fill(q, b, 4, 4, 6);
    accel_queue_signal(q, later, 1);
    CHECK_OK(accel_queue_submit(q));
    CHECK_OK(accel_signal_fail(gate, ACCEL_ERROR_BACKEND));
    CHECK(accel_signal_value(s) > ACCEL_SIGNAL_MAX);
    CHECK_RESULT(accel_signal_wait(s, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
    CHECK_EQ_U64(test_buffer_u32(b, 0), 0);
    /* the next batch of the queue is no longer held back */
    CHECK_EQ_U64(accel_signal_value(later), 1);
    CHECK_EQ_U64(test_buffer_u32(b, 1), 6);
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    accel_device_destroy(dev);
}

/* N queues: queue i waits s[i] >= 1 and signals s[i+1] = 1; the set of s[0] runs the whole chain.
   Before: the set ran it recursively, a frame group per queue (native: a crash at 20,000 queues, wasm
   under node: "Maximum call stack size exceeded" at ~3,500). */
TEST(nt_deep_chain_runs_in_a_loop) {
    NT_ONLY();
#if defined(__wasi__)
    enum { N = 6000 };
#else
    enum { N = 100000 };
#endif
    accel_device* dev;
    accel_queue** q = (accel_queue**)calloc(N, sizeof *q);
    accel_signal** s = (accel_signal**)calloc(N + 1, sizeof *s);
    int made = 0;
    REQUIRE(q && s);
    if (!CHECK_OK(test_device_create(&dev))) { free(q); free(s); return; }
    for (int i = 0; i <= N && !TEST_FAILED_SO_FAR(); i++) CHECK_OK(accel_signal_create(dev, 0, &s[i]));
    for (int i = 0; i < N && !TEST_FAILED_SO_FAR(); i++, made++)
        CHECK_OK(accel_queue_create(dev, ACCEL_QUEUE_COPY, &q[i]));
    for (int i = 0; i < made && !TEST_FAILED_SO_FAR(); i++) {
        accel_queue_wait(q[i], s[i], 1);
        accel_queue_signal(q[i], s[i + 1], 1);
        CHECK_OK(accel_queue_submit(q[i]));
    }
    if (!TEST_FAILED_SO_FAR()) {
        CHECK_EQ_U64(accel_signal_value(s[N]), 0);
        CHECK_OK(accel_signal_set(s[0], 1));
        CHECK_EQ_U64(accel_signal_value(s[N / 2]), 1);
        CHECK_EQ_U64(accel_signal_value(s[N]), 1);
        for (int i = 0; i < made && !TEST_FAILED_SO_FAR(); i++) CHECK_OK(accel_queue_finish(q[i], 0));
    }
    accel_device_destroy(dev);
    free(q);
    free(s);
}

/* A CPU kernel sets a signal that releases another queue of its device, whose batch runs an exec.
   Before: the released batch ran inside the kernel and waited forever for the device's only lane,
   which the kernel held (the test hung). */
static accel_signal* nt_kernel_gate;
static void nt_kernel_set_gate(const accel_dispatch* d) {
    ((uint32_t*)d->buffers[0])[0] = 1;
    accel_signal_set(nt_kernel_gate, 1);
    ((uint32_t*)d->buffers[0])[1] = 2;   /* the kernel goes on after the set */
}
TEST(nt_kernel_set_releases_other_queue_exec) {
    NT_ONLY();
    if (!test_backend_is_cpu()) SKIP("CPU kernels only");
    accel_device* dev;
    accel_queue *q1, *q2;
    accel_program *setter, *add;
    accel_buffer *flags, *b;
    accel_signal *done1, *done2;
    accel_program_desc pd;
    uint32_t n = 64;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q1));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q2));
    memset(&pd, 0, sizeof pd);
    pd.name = "set_gate";
    pd.cpu = nt_kernel_set_gate;
    pd.buffer_count = 1;
    REQUIRE_OK(accel_program_create(dev, &pd, &setter));
    REQUIRE_OK(test_program_create(dev, TK_ADD_ONE, &add));
    REQUIRE_OK(test_buffer_create(dev, 16, ACCEL_MEMORY_HOST, &flags));
    REQUIRE_OK(test_buffer_create(dev, 64 * 4, ACCEL_MEMORY_HOST, &b));
    REQUIRE_OK(accel_signal_create(dev, 0, &nt_kernel_gate));
    REQUIRE_OK(accel_signal_create(dev, 0, &done1));
    REQUIRE_OK(accel_signal_create(dev, 0, &done2));
    accel_queue_wait(q2, nt_kernel_gate, 1);
    accel_queue_exec(q2, add, &b, 1, &n, 1, accel_exec_1d(64, 16));
    accel_queue_signal(q2, done2, 1);
    CHECK_OK(accel_queue_submit(q2));
    CHECK_EQ_U64(accel_signal_value(done2), 0);   /* parked */
    accel_queue_exec(q1, setter, &flags, 1, NULL, 0, accel_exec_1d(1, 1));
    accel_queue_signal(q1, done1, 1);
    CHECK_OK(accel_queue_submit(q1));
    CHECK_EQ_U64(accel_signal_value(done1), 1);
    CHECK_EQ_U64(accel_signal_value(done2), 1);
    CHECK_EQ_U64(test_buffer_u32(flags, 1), 2);
    int bad = 0;
    for (uint32_t i = 0; i < 64; i++) bad += test_buffer_u32(b, i) != 1;
    CHECK_EQ_INT(bad, 0);
    accel_device_destroy(dev);
}

/* A CPU kernel records an exec on another queue of its device and waits for it (accel_queue_finish):
   that exec cannot run inside the kernel (the device's one lane is the kernel's), so the finish reports
   DEADLOCK at once, and the exec runs once the kernel's batch is done. Before: the finish spun for
   ever waiting for the lane. */
static accel_queue* nt_inner_q;
static accel_program* nt_inner_add;
static accel_buffer* nt_inner_b;
static accel_result nt_inner_finish;
static void nt_kernel_finishes_other_queue(const accel_dispatch* d) {
    uint32_t n = 64;
    (void)d;
    accel_queue_exec(nt_inner_q, nt_inner_add, &nt_inner_b, 1, &n, 1, accel_exec_1d(64, 16));
    nt_inner_finish = accel_queue_finish(nt_inner_q, 1000000000ull);
}
TEST(nt_kernel_finish_of_other_queue_exec) {
    NT_ONLY();
    if (!test_backend_is_cpu()) SKIP("CPU kernels only");
    accel_device* dev;
    accel_queue* q1;
    accel_program* outer;
    accel_program_desc pd;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q1));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &nt_inner_q));
    memset(&pd, 0, sizeof pd);
    pd.name = "finish_other";
    pd.cpu = nt_kernel_finishes_other_queue;
    REQUIRE_OK(accel_program_create(dev, &pd, &outer));
    REQUIRE_OK(test_program_create(dev, TK_ADD_ONE, &nt_inner_add));
    REQUIRE_OK(test_buffer_create(dev, 64 * 4, ACCEL_MEMORY_HOST, &nt_inner_b));
    nt_inner_finish = ACCEL_OK;
    accel_queue_exec(q1, outer, NULL, 0, NULL, 0, accel_exec_1d(1, 1));
    CHECK_OK(accel_queue_finish(q1, ACCEL_WAIT_FOREVER));
    CHECK_RESULT(nt_inner_finish, ACCEL_ERROR_DEADLOCK);
    CHECK_OK(accel_queue_finish(nt_inner_q, ACCEL_WAIT_FOREVER));   /* it ran after the kernel */
    int bad = 0;
    for (uint32_t i = 0; i < 64; i++) bad += test_buffer_u32(nt_inner_b, i) != 1;
    CHECK_EQ_INT(bad, 0);
    accel_device_destroy(dev);
}

/* A host call of q1 submits work to q2 (or sets the signal q2's parked batch waits for) and waits for
   q2's signal: q2 runs inside that wait, as inside an accel_queue_finish of q2 (the device's loop runs
   the host call, so q2 only went on its ready list): not DEADLOCK, for work that can run. */
static accel_queue* nt_hc_q2;
static accel_signal *nt_hc_s2, *nt_hc_gate;
static accel_buffer* nt_hc_buf;
static accel_result nt_hc_result;
static void nt_hc_submit_and_wait(void* user) {
    (void)user;
    accel_queue_fill(nt_hc_q2, nt_hc_buf, 0, 4, 7);
    accel_queue_signal(nt_hc_q2, nt_hc_s2, 1);
    nt_hc_result = accel_queue_submit(nt_hc_q2);
    if (nt_hc_result == ACCEL_OK) nt_hc_result = accel_signal_wait(nt_hc_s2, 1, ACCEL_WAIT_FOREVER);
}
static void nt_hc_release_and_wait(void* user) {
    (void)user;
    nt_hc_result = accel_signal_set(nt_hc_gate, 1);
    if (nt_hc_result == ACCEL_OK) nt_hc_result = accel_signal_wait(nt_hc_s2, 2, 1000000000u);
}
TEST(nt_host_call_waits_on_work_it_submitted) {
    NT_ONLY();
    accel_device* dev;
    accel_queue* q1;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q1));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &nt_hc_q2));
    REQUIRE_OK(accel_signal_create(dev, 0, &nt_hc_s2));
    REQUIRE_OK(accel_signal_create(dev, 0, &nt_hc_gate));
    REQUIRE_OK(test_buffer_create(dev, 64, ACCEL_MEMORY_HOST, &nt_hc_buf));
    nt_hc_result = ACCEL_ERROR_BACKEND;
    accel_queue_host_call(q1, nt_hc_submit_and_wait, NULL);
    CHECK_OK(accel_queue_finish(q1, ACCEL_WAIT_FOREVER));
    CHECK_OK(nt_hc_result);
    CHECK_EQ_U64(test_buffer_u32(nt_hc_buf, 0), 7);
    /* q2's batch parked on the gate; the host call releases it, then waits for it */
    accel_queue_wait(nt_hc_q2, nt_hc_gate, 1);
    accel_queue_fill(nt_hc_q2, nt_hc_buf, 0, 4, 9);
    accel_queue_signal(nt_hc_q2, nt_hc_s2, 2);
    CHECK_OK(accel_queue_submit(nt_hc_q2));
    nt_hc_result = ACCEL_ERROR_BACKEND;
    accel_queue_host_call(q1, nt_hc_release_and_wait, NULL);
    CHECK_OK(accel_queue_finish(q1, ACCEL_WAIT_FOREVER));
    CHECK_OK(nt_hc_result);
    CHECK_EQ_U64(test_buffer_u32(nt_hc_buf, 0), 9);
    accel_device_destroy(dev);
}

/* Two queues parked on one signal; its set wakes both, and the first to run (the one that parked last)
   has a host call that destroys the other. Before: the set detached the signal's waiters and ran the
   first queue's batch before the other was on any list, so the destroy dropped the other's batch as
   "parked on signals nothing can set" (failing its signal although the gate was set) and freed the queue
   while the set still held its waiter (ASan: heap-use-after-free in accel_i_event_notify). */
static accel_queue* nt_pair_other;
static void nt_hc_destroy_other(void* user) {
    (void)user;
    accel_queue_destroy(nt_pair_other);
    nt_pair_other = NULL;
}
TEST(nt_host_call_destroys_queue_woken_by_same_set) {
    NT_ONLY();
    accel_device* dev;
    accel_queue* q;
    accel_buffer* b;
    accel_signal *gate, *s;
    if (!test_queue_scene(16, &dev, &q, &b, &gate, &s)) { accel_device_destroy(dev); return; }
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &nt_pair_other));
    accel_queue_wait(nt_pair_other, gate, 1);   /* parks first */
    accel_queue_fill(nt_pair_other, b, 0, 4, 3);
    accel_queue_signal(nt_pair_other, s, 1);
    CHECK_OK(accel_queue_submit(nt_pair_other));
    accel_queue_wait(q, gate, 1);
    accel_queue_host_call(q, nt_hc_destroy_other, NULL);
    CHECK_OK(accel_queue_submit(q));
    test_log_reset();
    CHECK_OK(accel_signal_set(gate, 1));
    CHECK(nt_pair_other == NULL);
    CHECK_EQ_U64(accel_signal_value(s), 1);   /* the destroyed queue's batch ran: the gate was set */
    CHECK_EQ_U64(test_buffer_u32(b, 0), 3);
    CHECK_EQ_U64(test_log_count(ACCEL_LOG_WARN), 0);
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    accel_device_destroy(dev);
}

/* As above, but the host call waits for the other queue's work, a queue of another device (a signal's
   set runs the released batches of every device) or of the same device (a finish). Before: DEADLOCK
   when the other queue had parked first, OK when it had parked last. */
static accel_queue* nt_woken_q;
static accel_signal* nt_woken_s;
static accel_result nt_woken_wait, nt_woken_finish;
static void nt_hc_wait_woken(void* user) {
    (void)user;
    nt_woken_wait = accel_signal_wait(nt_woken_s, 1, ACCEL_WAIT_FOREVER);
}
static void nt_hc_finish_woken(void* user) {
    (void)user;
    nt_woken_finish = accel_queue_finish(nt_woken_q, ACCEL_WAIT_FOREVER);
}
TEST(nt_host_call_waits_on_queue_woken_by_same_set) {
    NT_ONLY();
    accel_device *dev, *dev2;
    accel_queue *q, *other, *q2;
    accel_buffer* b;
    accel_signal *gate, *s;
    if (!test_queue_scene(16, &dev, &q, &b, &gate, &s)) { accel_device_destroy(dev); return; }
    REQUIRE_OK(test_device_create(&dev2));
    REQUIRE_OK(accel_queue_create(dev2, ACCEL_QUEUE_COMPUTE, &other));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &nt_woken_q));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q2));
    REQUIRE_OK(accel_signal_create(dev2, 0, &nt_woken_s));
    /* parked first on the gate: other (device 2) and nt_woken_q; then q and q2 with the waits */
    accel_queue_wait(other, gate, 1);
    accel_queue_signal(other, nt_woken_s, 1);
    CHECK_OK(accel_queue_submit(other));
    accel_queue_wait(nt_woken_q, gate, 1);
    accel_queue_fill(nt_woken_q, b, 0, 4, 4);
    CHECK_OK(accel_queue_submit(nt_woken_q));
    accel_queue_wait(q, gate, 1);
    accel_queue_host_call(q, nt_hc_wait_woken, NULL);
    accel_queue_signal(q, s, 1);
    CHECK_OK(accel_queue_submit(q));
    accel_queue_wait(q2, gate, 1);
    accel_queue_host_call(q2, nt_hc_finish_woken, NULL);
    CHECK_OK(accel_queue_submit(q2));
    nt_woken_wait = nt_woken_finish = ACCEL_ERROR_BACKEND;
    CHECK_OK(accel_signal_set(gate, 1));
    CHECK_OK(nt_woken_wait);
    CHECK_OK(nt_woken_finish);
    CHECK_EQ_U64(accel_signal_value(nt_woken_s), 1);
    CHECK_EQ_U64(accel_signal_value(s), 1);
    CHECK_EQ_U64(test_buffer_u32(b, 0), 4);
    accel_device_destroy(dev);
    accel_device_destroy(dev2);
}

/* A device destroy waits for all queues before it releases any. Here dropping qa's batch (parked on a
   signal nothing sets) fails g and so releases qb, whose next batch's host call uses qc. Before: the
   destroy released the queues one at a time (newest first: qc, then qa), so that host call ran on a
   freed queue (ASan: heap-use-after-free). */
static accel_queue* nt_dd_qc;
static accel_result nt_dd_result;
static void nt_hc_use_qc(void* user) {
    (void)user;
    nt_dd_result = accel_queue_finish(nt_dd_qc, 0);
}
TEST(nt_device_destroy_settles_every_queue_first) {
    NT_ONLY();
    accel_device* dev;
    accel_queue *qa, *qb;
    accel_signal *never, *g;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &qb));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &qa));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &nt_dd_qc));
    REQUIRE_OK(accel_signal_create(dev, 0, &never));
    REQUIRE_OK(accel_signal_create(dev, 0, &g));
    accel_queue_wait(qa, never, 1);
    accel_queue_signal(qa, g, 1);
    CHECK_OK(accel_queue_submit(qa));
    accel_queue_wait(qb, g, 1);
    CHECK_OK(accel_queue_submit(qb));
    accel_queue_host_call(qb, nt_hc_use_qc, NULL);
    CHECK_OK(accel_queue_submit(qb));
    nt_dd_result = ACCEL_ERROR_BACKEND;
    test_log_reset();
    accel_device_destroy(dev);
    CHECK_OK(nt_dd_result);   /* the host call ran, with qc alive */
    CHECK(test_log_contains("accel_device_destroy: dropping"));
}

int main(int argc, char** argv) {
    test_begin(argc, argv);
    RUN(nt_submit_runs_batch_inline);
    RUN(nt_cpu_threads_is_one);
    RUN(nt_parked_batch_runs_on_host_set);
    RUN(nt_parked_batch_keeps_queue_order);
    RUN(nt_chain_across_queues);
    RUN(nt_wait_satisfiable_by_parked_work);
    RUN(nt_wait_many_deadlock);
    RUN(nt_fail_parked_batch);
    RUN(nt_deep_chain_runs_in_a_loop);
    RUN(nt_kernel_set_releases_other_queue_exec);
    RUN(nt_kernel_finish_of_other_queue_exec);
    RUN(nt_host_call_waits_on_work_it_submitted);
    RUN(nt_host_call_destroys_queue_woken_by_same_set);
    RUN(nt_host_call_waits_on_queue_woken_by_same_set);
    RUN(nt_device_destroy_settles_every_queue_first);
    return test_end();
}
