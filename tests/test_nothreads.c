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

/* A wait inside a host call for a value already reached returns at once: it ran the device's other
   ready queues first (q0's host call, nested inside it), whose wait for what q1 signals after this very
   host call then said DEADLOCK (helper 89). Both waits must return OK, q0's host call after q1's. */
static accel_signal *nt_sat_s1, *nt_sat_x;
static accel_result nt_sat_ra, nt_sat_rb;
static int nt_sat_order, nt_sat_a_at, nt_sat_b_done_at;
static void nt_sat_host_a(void* u) {
    (void)u;
    nt_sat_a_at = ++nt_sat_order;
    nt_sat_ra = accel_signal_wait(nt_sat_s1, 1, ACCEL_WAIT_FOREVER);
}
static void nt_sat_host_b(void* u) {
    (void)u;
    nt_sat_rb = accel_signal_wait(nt_sat_x, 1, ACCEL_WAIT_FOREVER);   /* x is 1 already */
    nt_sat_b_done_at = ++nt_sat_order;
}
TEST(nt_satisfied_wait_in_a_host_call_runs_nothing_else) {
    NT_ONLY();
    accel_device* dev;
    accel_queue *q0, *q1;
    accel_signal *g, *s0;
    nt_sat_ra = nt_sat_rb = ACCEL_ERROR_BACKEND;
    nt_sat_order = 0;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_signal_create(dev, 0, &g));
    REQUIRE_OK(accel_signal_create(dev, 0, &s0));
    REQUIRE_OK(accel_signal_create(dev, 0, &nt_sat_s1));
    REQUIRE_OK(accel_signal_create(dev, 1, &nt_sat_x));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q0));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q1));
    accel_queue_wait(q0, g, 1);
    accel_queue_host_call(q0, nt_sat_host_a, NULL);
    accel_queue_signal(q0, s0, 1);
    CHECK_OK(accel_queue_submit(q0));
    accel_queue_wait(q1, g, 1);
    accel_queue_host_call(q1, nt_sat_host_b, NULL);
    accel_queue_signal(q1, nt_sat_s1, 1);
    CHECK_OK(accel_queue_submit(q1));
    CHECK_OK(accel_signal_set(g, 1));
    CHECK_OK(accel_queue_finish(q0, ACCEL_WAIT_FOREVER));
    CHECK_OK(accel_queue_finish(q1, ACCEL_WAIT_FOREVER));
    CHECK_RESULT(nt_sat_rb, ACCEL_OK);
    CHECK_RESULT(nt_sat_ra, ACCEL_OK);
    CHECK_EQ_U64(accel_signal_value(s0), 1);
    CHECK(nt_sat_a_at > nt_sat_b_done_at);   /* not nested inside host_b's wait */
    accel_device_destroy(dev);
}

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

/* A host call of device a's queue waits for (or finishes, or destroys) device b's queue, which is parked
   on a's signal; a's other queue sets that signal, released (or submitted) just before by the host call's
   own batch or by the host call itself. That queue waits on a's ready list behind the host call (a's loop
   runs the host call): the wait must run it, and b's queue after it, not report DEADLOCK (or drop b's
   batch as parked on a signal nothing can set: a destroy of b's queue or of b). Before: the wait ran
   only its signal's device, b. */
typedef struct nt_cross {
    accel_queue *qa1, *qa2, *qb;
    accel_signal *sa, *sb, *sa0, *done;   /* done: a's, which qb signals too */
    accel_device* b;
    /* 0: qa2 released before the host call; 1: submitted by it (wait); 2: finish; 3: queue destroy;
       4: device destroy */
    int variant;
    accel_result r;
} nt_cross;
static nt_cross nt_x;
static void nt_hc_cross(void* user) {
    (void)user;
    if (nt_x.variant > 0) {
        accel_queue_signal(nt_x.qa2, nt_x.sa, 1);
        nt_x.r = accel_queue_submit(nt_x.qa2);
        if (nt_x.r != ACCEL_OK) return;
    }
    if (nt_x.variant == 3) { accel_queue_destroy(nt_x.qb); nt_x.qb = NULL; return; }
    if (nt_x.variant == 4) { accel_device_destroy(nt_x.b); nt_x.b = NULL; return; }
    nt_x.r = nt_x.variant == 2 ? accel_queue_finish(nt_x.qb, ACCEL_WAIT_FOREVER)
                               : accel_signal_wait(nt_x.sb, 1, ACCEL_WAIT_FOREVER);
}
TEST(nt_host_call_waits_on_another_device_released_by_its_own) {
    NT_ONLY();
    for (int variant = 0; variant < 5; variant++) {
        accel_device* a;
        memset(&nt_x, 0, sizeof nt_x);
        nt_x.variant = variant;
        nt_x.r = ACCEL_ERROR_BACKEND;
        REQUIRE_OK(test_device_create(&a));
        REQUIRE_OK(test_device_create(&nt_x.b));
        REQUIRE_OK(accel_queue_create(a, ACCEL_QUEUE_COMPUTE, &nt_x.qa1));
        REQUIRE_OK(accel_queue_create(a, ACCEL_QUEUE_COMPUTE, &nt_x.qa2));
        REQUIRE_OK(accel_queue_create(nt_x.b, ACCEL_QUEUE_COMPUTE, &nt_x.qb));
        REQUIRE_OK(accel_signal_create(a, 0, &nt_x.sa));
        REQUIRE_OK(accel_signal_create(a, 0, &nt_x.sa0));
        REQUIRE_OK(accel_signal_create(a, 0, &nt_x.done));
        REQUIRE_OK(accel_signal_create(nt_x.b, 0, &nt_x.sb));
        accel_queue_wait(nt_x.qb, nt_x.sa, 1);
        accel_queue_signal(nt_x.qb, nt_x.sb, 1);
        accel_queue_signal(nt_x.qb, nt_x.done, 1);
        CHECK_OK(accel_queue_submit(nt_x.qb));                 /* parked on sa */
        if (variant == 0) {
            accel_queue_wait(nt_x.qa2, nt_x.sa0, 1);
            accel_queue_signal(nt_x.qa2, nt_x.sa, 1);
            CHECK_OK(accel_queue_submit(nt_x.qa2));            /* parked on sa0 */
            accel_queue_signal(nt_x.qa1, nt_x.sa0, 1);         /* releases it: on a's ready list */
        }
        accel_queue_host_call(nt_x.qa1, nt_hc_cross, NULL);
        CHECK_OK(accel_queue_submit(nt_x.qa1));
        if (variant < 3 && !CHECK_OK(nt_x.r)) fprintf(stderr, "    variant %d\n", variant);
        CHECK_EQ_U64(accel_signal_value(nt_x.sa), 1);
        if (!CHECK_EQ_U64(accel_signal_value(nt_x.done), 1)) fprintf(stderr, "    variant %d\n", variant);
        if (nt_x.b) CHECK_EQ_U64(accel_signal_value(nt_x.sb), 1);
        accel_device_destroy(a);
        if (nt_x.b) accel_device_destroy(nt_x.b);
    }
}

/* The same on one device: a host call of qa1 submits qa2 (which sets sa), then a batch of q that waits
   for sa, and finishes or destroys q. q is on the ready list behind qa2 (the device's loop runs the host
   call): its settle ran q alone, which parked on sa, and the finish said DEADLOCK (the destroy failed
   q's signal) although qa2 would set sa. */
static accel_queue *nt_s_qa2, *nt_s_q;
static accel_signal *nt_s_sa, *nt_s_done;
static accel_result nt_s_r;
static void nt_hc_same(void* user) {
    accel_queue_signal(nt_s_qa2, nt_s_sa, 1);
    nt_s_r = accel_queue_submit(nt_s_qa2);
    accel_queue_wait(nt_s_q, nt_s_sa, 1);
    accel_queue_signal(nt_s_q, nt_s_done, 1);
    if (nt_s_r == ACCEL_OK) nt_s_r = accel_queue_submit(nt_s_q);   /* on the ready list, behind qa2 */
    if (nt_s_r != ACCEL_OK) return;
    if (user) { accel_queue_destroy(nt_s_q); nt_s_q = NULL; return; }
    nt_s_r = accel_queue_finish(nt_s_q, ACCEL_WAIT_FOREVER);
}
TEST(nt_host_call_finishes_a_queue_released_by_its_device) {
    NT_ONLY();
    for (int destroy = 0; destroy < 2; destroy++) {
        accel_device* a;
        accel_queue* qa1;
        nt_s_r = ACCEL_ERROR_BACKEND;
        REQUIRE_OK(test_device_create(&a));
        REQUIRE_OK(accel_queue_create(a, ACCEL_QUEUE_COMPUTE, &qa1));
        REQUIRE_OK(accel_queue_create(a, ACCEL_QUEUE_COMPUTE, &nt_s_qa2));
        REQUIRE_OK(accel_queue_create(a, ACCEL_QUEUE_COMPUTE, &nt_s_q));
        REQUIRE_OK(accel_signal_create(a, 0, &nt_s_sa));
        REQUIRE_OK(accel_signal_create(a, 0, &nt_s_done));
        accel_queue_host_call(qa1, nt_hc_same, destroy ? (void*)1 : NULL);
        CHECK_OK(accel_queue_submit(qa1));
        if (!CHECK_OK(nt_s_r)) fprintf(stderr, "    %s\n", destroy ? "destroy" : "finish");
        if (!CHECK_EQ_U64(accel_signal_value(nt_s_done), 1)) fprintf(stderr, "    %s\n", destroy ? "destroy" : "finish");
        accel_device_destroy(a);
    }
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

/* ---- a destroy from a host call, of what runs further up the stack ----
   A batch's host call or kernel sets a signal; the parked host call it releases runs inline (another
   device: at once; the same device: inside a wait) and destroys the first batch's queue or device.
   The destroy drops the handle and the teardown waits for the running batch: the rest of that batch
   runs, so do later batches that can, and a batch parked on a signal nothing can set is dropped (its
   signals fail with DEADLOCK); then the queue (and a destroyed device) is freed. Before: the destroy
   freed the running batch and the queue under the frame that ran them (ASan: heap-use-after-free in
   accel_i_cpu_run_cmds). */
static struct {
    accel_queue* q;          /* destroyed by nt_up_destroy_queue */
    accel_device* dev;       /* destroyed by nt_up_destroy_device */
    accel_signal* set;       /* set by nt_up_set and nt_up_kernel_set */
    accel_signal* waited;    /* waited for (to 1) by nt_up_wait */
    accel_result r;          /* nt_up_set's set, nt_up_wait's wait */
    accel_result finish;     /* nt_up_finish's finish */
    int ran;                 /* a bit per host call or kernel that ran */
} nt_up;
static void nt_up_mark(void* bit) { nt_up.ran |= (int)(intptr_t)bit; }
static void nt_up_set(void* user) {
    (void)user;
    nt_up.ran |= 1;
    nt_up.r = accel_signal_set(nt_up.set, 1);
}
static void nt_up_kernel_set(const accel_dispatch* d) {
    ((uint32_t*)d->buffers[0])[3] = 9;
    nt_up.ran |= 1;
    nt_up.r = accel_signal_set(nt_up.set, 1);
    ((uint32_t*)d->buffers[0])[4] = 10;   /* after the set: the destroy went, the kernel goes on */
}
static void nt_up_wait(void* user) {
    (void)user;
    nt_up.ran |= 1;
    nt_up.r = accel_signal_wait(nt_up.waited, 1, ACCEL_WAIT_FOREVER);
}
static void nt_up_destroy_queue(void* user) {
    (void)user;
    nt_up.ran |= 2;
    accel_queue_destroy(nt_up.q);
    nt_up.q = NULL;
}
static void nt_up_destroy_device(void* user) {
    (void)user;
    nt_up.ran |= 2;
    accel_device_destroy(nt_up.dev);
    nt_up.dev = NULL;
}
static void nt_up_finish(void* user) {
    (void)user;
    nt_up.ran |= 2;
    nt_up.finish = accel_queue_finish(nt_up.q, ACCEL_WAIT_FOREVER);
}
/* The batches of the queue that is destroyed under itself: (1) wait go, `first` (a host call, or with p
   an exec of p on b), fill b[0] = 5, host call (bit 4), signal done 1; (2) fill b[1] = 6, signal done 2;
   (3) wait never, host call (bit 8), fill b[2] = 7, signal dropped 1. */
static int nt_up_victim(accel_queue* q, accel_buffer* b, accel_program* p, void (*first)(void*),
                        accel_signal* go, accel_signal* never, accel_signal* done, accel_signal* dropped) {
    accel_queue_wait(q, go, 1);
    if (p) accel_queue_exec(q, p, &b, 1, NULL, 0, accel_exec_1d(1, 1));
    else accel_queue_host_call(q, first, NULL);
    accel_queue_fill(q, b, 0, 4, 5);
    accel_queue_host_call(q, nt_up_mark, (void*)(intptr_t)4);
    accel_queue_signal(q, done, 1);
    if (!CHECK_OK(accel_queue_submit(q))) return 0;
    accel_queue_fill(q, b, 4, 4, 6);
    accel_queue_signal(q, done, 2);
    if (!CHECK_OK(accel_queue_submit(q))) return 0;
    accel_queue_wait(q, never, 1);
    accel_queue_host_call(q, nt_up_mark, (void*)(intptr_t)8);
    accel_queue_fill(q, b, 8, 4, 7);
    accel_queue_signal(q, dropped, 1);
    return CHECK_OK(accel_queue_submit(q));
}
/* What the victim's batches did: (1) and (2) ran, (3) was dropped (dropped failed with DEADLOCK). */
static void nt_up_check(accel_signal* done, accel_signal* dropped, int ran) {
    CHECK_EQ_INT(nt_up.ran, ran);
    CHECK_EQ_U64(accel_signal_value(done), 2);
    CHECK_EQ_U64(accel_signal_value(dropped), ACCEL_SIGNAL_MAX + 1 + (uint64_t)(-(int)ACCEL_ERROR_DEADLOCK));
}
static void nt_up_check_buffer(accel_buffer* b) {
    CHECK_EQ_U64(test_buffer_u32(b, 0), 5);
    CHECK_EQ_U64(test_buffer_u32(b, 1), 6);
    CHECK_EQ_U64(test_buffer_u32(b, 2), 0);
}
/* A device with a counting allocator, a compute queue, a 64-byte buffer and two signals (go, never). */
static int nt_up_scene(test_alloc_state* st, accel_device** dev, accel_queue** q, accel_buffer** b,
                       accel_signal** go, accel_signal** never) {
    accel_device_desc d;
    memset(&d, 0, sizeof d);
    test_alloc_init(st);
    d.allocator = test_allocator(st);
    *dev = NULL;
    return CHECK_OK(test_device_create_desc(d, dev)) &&
           CHECK_OK(accel_queue_create(*dev, ACCEL_QUEUE_COMPUTE, q)) &&
           CHECK_OK(test_buffer_create(*dev, 64, ACCEL_MEMORY_HOST, b)) &&
           CHECK_OK(accel_signal_create(*dev, 0, go)) && CHECK_OK(accel_signal_create(*dev, 0, never));
}
/* The destroying queue, on its own device: wait sA, host call fn. */
static int nt_up_destroyer(accel_device* dev, accel_queue** qa, accel_signal** sa, void (*fn)(void*)) {
    if (!CHECK_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, qa)) ||
        !CHECK_OK(accel_signal_create(dev, 0, sa)))
        return 0;
    accel_queue_wait(*qa, *sa, 1);
    accel_queue_host_call(*qa, fn, NULL);
    return CHECK_OK(accel_queue_submit(*qa));
}
/* qB's host call sets device A's signal; qA's host call destroys qB. */
static void nt_up_other_device_queue(accel_program* (*kernel)(accel_device*)) {
    test_alloc_state st;
    accel_device *devA, *devB;
    accel_queue *qA, *qB;
    accel_buffer* b;
    accel_signal *go, *never, *sA, *done, *dropped;
    memset(&nt_up, 0, sizeof nt_up);
    if (!nt_up_scene(&st, &devB, &qB, &b, &go, &never)) { accel_device_destroy(devB); return; }
    REQUIRE_OK(test_device_create(&devA));
    REQUIRE_OK(accel_signal_create(devB, 0, &done));
    REQUIRE_OK(accel_signal_create(devB, 0, &dropped));
    REQUIRE(nt_up_destroyer(devA, &qA, &sA, nt_up_destroy_queue));
    nt_up.q = qB;
    nt_up.set = sA;
    REQUIRE(nt_up_victim(qB, b, kernel ? kernel(devB) : NULL, nt_up_set, go, never, done, dropped));
    CHECK_EQ_INT(nt_up.ran, 0);   /* parked */
    test_log_reset();
    CHECK_OK(accel_signal_set(go, 1));
    CHECK(nt_up.q == NULL);
    CHECK_OK(nt_up.r);
    nt_up_check(done, dropped, 1 | 2 | 4);
    nt_up_check_buffer(b);
    if (kernel) {
        CHECK_EQ_U64(test_buffer_u32(b, 3), 9);
        CHECK_EQ_U64(test_buffer_u32(b, 4), 10);
    }
    CHECK(test_log_contains("accel_queue_destroy: dropping"));
    CHECK_OK(accel_queue_finish(qA, ACCEL_WAIT_FOREVER));
    accel_device_destroy(devA);
    accel_device_destroy(devB);
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
}
TEST(nt_host_call_destroys_queue_up_the_stack) {
    NT_ONLY();
    nt_up_other_device_queue(NULL);
}
static accel_program* nt_up_setter(accel_device* dev) {
    accel_program_desc pd;
    accel_program* p = NULL;
    memset(&pd, 0, sizeof pd);
    pd.name = "up_set";
    pd.cpu = nt_up_kernel_set;
    pd.buffer_count = 1;
    CHECK_OK(accel_program_create(dev, &pd, &p));
    return p;
}
TEST(nt_host_call_destroys_queue_of_running_kernel) {
    NT_ONLY();
    if (!test_backend_is_cpu()) SKIP("CPU kernels only");
    nt_up_other_device_queue(nt_up_setter);
}
/* One device: qB's host call waits for y; the wait runs qA, which signals y and destroys qB. */
TEST(nt_host_call_destroys_queue_waiting_up_the_stack) {
    NT_ONLY();
    test_alloc_state st;
    accel_device* dev;
    accel_queue *qA, *qB;
    accel_buffer* b;
    accel_signal *go, *never, *done, *dropped;
    memset(&nt_up, 0, sizeof nt_up);
    if (!nt_up_scene(&st, &dev, &qB, &b, &go, &never)) { accel_device_destroy(dev); return; }
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &qA));
    REQUIRE_OK(accel_signal_create(dev, 0, &nt_up.waited));
    REQUIRE_OK(accel_signal_create(dev, 0, &done));
    REQUIRE_OK(accel_signal_create(dev, 0, &dropped));
    accel_queue_wait(qA, go, 1);   /* parks first: qB, parked last, runs first */
    accel_queue_signal(qA, nt_up.waited, 1);
    accel_queue_host_call(qA, nt_up_destroy_queue, NULL);
    CHECK_OK(accel_queue_submit(qA));
    nt_up.q = qB;
    REQUIRE(nt_up_victim(qB, b, NULL, nt_up_wait, go, never, done, dropped));
    CHECK_OK(accel_signal_set(go, 1));
    CHECK(nt_up.q == NULL);
    CHECK_OK(nt_up.r);   /* the wait */
    nt_up_check(done, dropped, 1 | 2 | 4);
    nt_up_check_buffer(b);
    CHECK_OK(accel_queue_finish(qA, ACCEL_WAIT_FOREVER));
    accel_device_destroy(dev);
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
}
/* qB's host call sets device A's signal; qA's host call destroys qB's device. qB's batches signal
   device A's signals; the device is freed once qB's teardown is done. */
TEST(nt_host_call_destroys_device_up_the_stack) {
    NT_ONLY();
    test_alloc_state st;
    accel_device *devA, *devB;
    accel_queue *qA, *qB;
    accel_buffer* b;
    accel_signal *go, *never, *sA, *done, *dropped;
    memset(&nt_up, 0, sizeof nt_up);
    if (!nt_up_scene(&st, &devB, &qB, &b, &go, &never)) { accel_device_destroy(devB); return; }
    REQUIRE_OK(test_device_create(&devA));
    REQUIRE_OK(accel_signal_create(devA, 0, &done));
    REQUIRE_OK(accel_signal_create(devA, 0, &dropped));
    REQUIRE(nt_up_destroyer(devA, &qA, &sA, nt_up_destroy_device));
    nt_up.dev = devB;
    nt_up.set = sA;
    REQUIRE(nt_up_victim(qB, b, NULL, nt_up_set, go, never, done, dropped));
    CHECK_OK(accel_signal_set(go, 1));
    CHECK(nt_up.dev == NULL);
    CHECK_OK(nt_up.r);
    nt_up_check(done, dropped, 1 | 2 | 4);
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);   /* device B is gone */
    CHECK_OK(accel_queue_finish(qA, ACCEL_WAIT_FOREVER));
    accel_device_destroy(devA);
}
/* As above, with qB's batch run inside its submit: the submit's loop on device B is all that holds it. */
TEST(nt_host_call_destroys_device_of_submitting_queue) {
    NT_ONLY();
    test_alloc_state st;
    accel_device *devA, *devB;
    accel_queue *qA, *qB;
    accel_buffer* b;
    accel_signal *go, *never, *sA, *done;
    memset(&nt_up, 0, sizeof nt_up);
    if (!nt_up_scene(&st, &devB, &qB, &b, &go, &never)) { accel_device_destroy(devB); return; }
    REQUIRE_OK(test_device_create(&devA));
    REQUIRE_OK(accel_signal_create(devA, 0, &done));
    REQUIRE(nt_up_destroyer(devA, &qA, &sA, nt_up_destroy_device));
    nt_up.dev = devB;
    nt_up.set = sA;
    accel_queue_host_call(qB, nt_up_set, NULL);
    accel_queue_fill(qB, b, 0, 4, 5);
    accel_queue_host_call(qB, nt_up_mark, (void*)(intptr_t)4);
    accel_queue_signal(qB, done, 1);
    CHECK_OK(accel_queue_submit(qB));
    CHECK(nt_up.dev == NULL);
    CHECK_OK(nt_up.r);
    CHECK_EQ_INT(nt_up.ran, 1 | 2 | 4);
    CHECK_EQ_U64(accel_signal_value(done), 1);
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);   /* device B is gone */
    CHECK_OK(accel_queue_finish(qA, ACCEL_WAIT_FOREVER));
    accel_device_destroy(devA);
}
/* A host call destroys its own queue: the handle goes, the rest runs as above. */
TEST(nt_host_call_destroys_own_queue) {
    NT_ONLY();
    test_alloc_state st;
    accel_device* dev;
    accel_queue* q;
    accel_buffer* b;
    accel_signal *go, *never, *done, *dropped;
    memset(&nt_up, 0, sizeof nt_up);
    if (!nt_up_scene(&st, &dev, &q, &b, &go, &never)) { accel_device_destroy(dev); return; }
    REQUIRE_OK(accel_signal_create(dev, 0, &done));
    REQUIRE_OK(accel_signal_create(dev, 0, &dropped));
    nt_up.q = q;
    REQUIRE(nt_up_victim(q, b, NULL, nt_up_destroy_queue, go, never, done, dropped));
    test_log_reset();
    CHECK_OK(accel_signal_set(go, 1));
    CHECK(nt_up.q == NULL);
    nt_up_check(done, dropped, 2 | 4);
    nt_up_check_buffer(b);
    CHECK(test_log_contains("accel_queue_destroy: dropping"));
    accel_device_destroy(dev);
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
}
/* A host call destroys its own queue's device: every other queue's teardown runs now (a parked batch
   dropped), its own queue's once its batch is done; then the device goes. */
TEST(nt_host_call_destroys_own_device) {
    NT_ONLY();
    test_alloc_state st;
    accel_device *dev, *obs;
    accel_queue *q, *other;
    accel_buffer* b;
    accel_signal *go, *never, *done, *dropped, *other_dropped;
    memset(&nt_up, 0, sizeof nt_up);
    if (!nt_up_scene(&st, &dev, &q, &b, &go, &never)) { accel_device_destroy(dev); return; }
    REQUIRE_OK(test_device_create(&obs));
    REQUIRE_OK(accel_signal_create(obs, 0, &done));
    REQUIRE_OK(accel_signal_create(obs, 0, &dropped));
    REQUIRE_OK(accel_signal_create(obs, 0, &other_dropped));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &other));
    accel_queue_wait(other, never, 1);
    accel_queue_signal(other, other_dropped, 1);
    CHECK_OK(accel_queue_submit(other));
    nt_up.dev = dev;
    REQUIRE(nt_up_victim(q, b, NULL, nt_up_destroy_device, go, never, done, dropped));
    CHECK_OK(accel_signal_set(go, 1));
    CHECK(nt_up.dev == NULL);
    nt_up_check(done, dropped, 2 | 4);
    CHECK_EQ_U64(accel_signal_value(other_dropped),
                 ACCEL_SIGNAL_MAX + 1 + (uint64_t)(-(int)ACCEL_ERROR_DEADLOCK));
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);   /* the device is gone */
    accel_device_destroy(obs);
}
/* As nt_device_destroy_settles_every_queue_first, from a host call of a queue of the device (its loop
   runs the host call): the destroy drains the device's queues there. Before: it skipped that settle, and
   the queues' teardowns (newest first) freed qc before qb's released host call used it. */
TEST(nt_host_call_device_destroy_settles_every_queue_first) {
    NT_ONLY();
    test_alloc_state st;
    accel_device* dev;
    accel_queue *qa, *qb, *qd;
    accel_buffer* b;
    accel_signal *never, *g;
    memset(&nt_up, 0, sizeof nt_up);
    if (!nt_up_scene(&st, &dev, &qb, &b, &g, &never)) { accel_device_destroy(dev); return; }
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &qa));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &nt_dd_qc));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &qd));
    accel_queue_wait(qa, never, 1);
    accel_queue_signal(qa, g, 1);
    CHECK_OK(accel_queue_submit(qa));
    accel_queue_wait(qb, g, 1);
    CHECK_OK(accel_queue_submit(qb));
    accel_queue_host_call(qb, nt_hc_use_qc, NULL);
    CHECK_OK(accel_queue_submit(qb));
    nt_dd_result = ACCEL_ERROR_BACKEND;
    nt_up.dev = dev;
    test_log_reset();
    accel_queue_host_call(qd, nt_up_destroy_device, NULL);
    accel_queue_host_call(qd, nt_up_mark, (void*)(intptr_t)4);
    CHECK_OK(accel_queue_submit(qd));
    CHECK(nt_up.dev == NULL);
    CHECK_EQ_INT(nt_up.ran, 2 | 4);
    CHECK_OK(nt_dd_result);   /* the host call ran, with qc alive */
    CHECK(test_log_contains("accel_device_destroy: dropping"));
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
}
/* A traced submit whose batch, run inside it, destroys its queue and the queue's device (closing the
   trace): the submit holds the queue over it and writes its span only to a trace still open. */
TEST(nt_traced_submit_destroys_its_device) {
    NT_ONLY();
    test_alloc_state st;
    accel_device_desc d;
    accel_device* dev = NULL;
    accel_queue* q;
    char path[64];
    snprintf(path, sizeof path, "accel_test_trace_nt_%llu.json",
             (unsigned long long)(test_now_ns() % 1000000007u));
    memset(&d, 0, sizeof d);
    memset(&nt_up, 0, sizeof nt_up);
    test_alloc_init(&st);
    d.allocator = test_allocator(&st);
    d.trace_path = path;
    if (test_device_create_desc(d, &dev) != ACCEL_OK) SKIP("no trace file here");
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    nt_up.q = q;
    nt_up.dev = dev;
    accel_queue_host_call(q, nt_up_destroy_queue, NULL);
    accel_queue_host_call(q, nt_up_mark, (void*)(intptr_t)4);
    accel_queue_host_call(q, nt_up_destroy_device, NULL);
    accel_queue_host_call(q, nt_up_mark, (void*)(intptr_t)8);
    CHECK_OK(accel_queue_submit(q));
    CHECK(nt_up.q == NULL && nt_up.dev == NULL);
    CHECK_EQ_INT(nt_up.ran, 2 | 4 | 8);
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
    remove(path);
}
/* A host call finishes a queue whose batch runs further up the stack (its host call released this
   one): that batch cannot end before the host call returns, so DEADLOCK at once (not a hang, nor a
   re-entry); the batch then ends. */
TEST(nt_host_call_finishes_queue_up_the_stack) {
    NT_ONLY();
    accel_device *devA, *devB;
    accel_queue *qA, *qB;
    accel_buffer* b;
    accel_signal *go, *sA, *done;
    memset(&nt_up, 0, sizeof nt_up);
    if (!test_queue_scene(16, &devB, &qB, &b, &go, &done)) { accel_device_destroy(devB); return; }
    REQUIRE_OK(test_device_create(&devA));
    REQUIRE(nt_up_destroyer(devA, &qA, &sA, nt_up_finish));
    nt_up.q = qB;
    nt_up.set = sA;
    accel_queue_wait(qB, go, 1);
    accel_queue_host_call(qB, nt_up_set, NULL);
    accel_queue_fill(qB, b, 0, 4, 5);
    accel_queue_signal(qB, done, 1);
    CHECK_OK(accel_queue_submit(qB));
    nt_up.finish = ACCEL_ERROR_BACKEND;
    CHECK_OK(accel_signal_set(go, 1));
    CHECK_EQ_INT(nt_up.ran, 1 | 2);
    CHECK_OK(nt_up.r);
    CHECK_RESULT(nt_up.finish, ACCEL_ERROR_DEADLOCK);
    CHECK_EQ_U64(accel_signal_value(done), 1);
    CHECK_EQ_U64(test_buffer_u32(b, 0), 5);
    CHECK_OK(accel_queue_finish(qB, 0));
    accel_device_destroy(devA);
    accel_device_destroy(devB);
}

/* accel_queue_finish of a queue whose batch (run by that finish) destroys the queue, or its device: the
   finish holds the queue until it returns (before: heap-use-after-free reading q after the wait). */
static void nt_finish_destroys_under_itself(bool device) {
    test_alloc_state st;
    accel_device* dev;
    accel_queue* q;
    accel_buffer* b;
    accel_signal *go, *never;
    memset(&nt_up, 0, sizeof nt_up);
    if (!nt_up_scene(&st, &dev, &q, &b, &go, &never)) { accel_device_destroy(dev); return; }
    nt_up.q = q;
    nt_up.dev = dev;
    accel_queue_host_call(q, device ? nt_up_destroy_device : nt_up_destroy_queue, NULL);
    accel_queue_host_call(q, nt_up_mark, (void*)(intptr_t)4);
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    CHECK_EQ_INT(nt_up.ran, 2 | 4);
    if (!device) {
        CHECK(nt_up.q == NULL);
        accel_device_destroy(dev);
    }
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
}
TEST(nt_finish_of_a_queue_its_host_call_destroys) { NT_ONLY(); nt_finish_destroys_under_itself(false); }
TEST(nt_finish_of_a_queue_whose_host_call_destroys_its_device) {
    NT_ONLY();
    nt_finish_destroys_under_itself(true);
}

/* A host call of qA sets the signal qB waits for, then finishes qB, whose released batch destroys qB:
   the finish runs it and returns OK, and qB is freed after. */
static accel_queue* nt_fin_q;
static void nt_up_set_then_finish(void* user) {
    (void)user;
    nt_up.ran |= 1;
    nt_up.r = accel_signal_set(nt_up.set, 1);
    nt_up.finish = accel_queue_finish(nt_fin_q, ACCEL_WAIT_FOREVER);
}
TEST(nt_finish_from_a_host_call_of_a_queue_that_destroys_itself) {
    NT_ONLY();
    test_alloc_state st;
    accel_device* dev;
    accel_queue *qA, *qB;
    accel_buffer* b;
    accel_signal *g, *never, *done;
    memset(&nt_up, 0, sizeof nt_up);
    if (!nt_up_scene(&st, &dev, &qB, &b, &g, &never)) { accel_device_destroy(dev); return; }
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &qA));
    REQUIRE_OK(accel_signal_create(dev, 0, &done));
    nt_up.q = nt_fin_q = qB;
    nt_up.set = g;
    nt_up.finish = ACCEL_ERROR_BACKEND;
    accel_queue_wait(qB, g, 1);
    accel_queue_host_call(qB, nt_up_destroy_queue, NULL);
    accel_queue_fill(qB, b, 0, 4, 5);
    accel_queue_signal(qB, done, 1);
    CHECK_OK(accel_queue_submit(qB));
    accel_queue_host_call(qA, nt_up_set_then_finish, NULL);
    CHECK_OK(accel_queue_submit(qA));
    CHECK_EQ_INT(nt_up.ran, 1 | 2);
    CHECK_OK(nt_up.r);
    CHECK_OK(nt_up.finish);
    CHECK(nt_up.q == NULL);
    CHECK_EQ_U64(accel_signal_value(done), 1);
    CHECK_EQ_U64(test_buffer_u32(b, 0), 5);
    accel_device_destroy(dev);
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
}

/* A host call destroys its own device; the rest of its batch signals what a queue of another device
   waits for: that signal is not an orphan (the rest ran: the other queue runs), and a queue-memory
   point after the destroy leaves nothing behind (the root it makes goes at its free point). */
static accel_device* nt_own_dev;
static void nt_destroy_own_device(void* user) { (void)user; accel_device_destroy(nt_own_dev); }
TEST(nt_host_call_destroys_own_device_rest_of_batch_counts) {
    NT_ONLY();
    test_alloc_state st;
    accel_device_desc d;
    accel_device* devB;
    accel_queue *qA, *qB;
    accel_buffer* b;
    accel_signal *go, *sA, *aDone, *bDone;
    memset(&d, 0, sizeof d);
    test_alloc_init(&st);
    d.allocator = test_allocator(&st);
    REQUIRE_OK(test_device_create_desc(d, &nt_own_dev));
    REQUIRE_OK(test_device_create(&devB));
    REQUIRE_OK(accel_queue_create(nt_own_dev, ACCEL_QUEUE_COMPUTE, &qA));
    REQUIRE_OK(accel_queue_create(devB, ACCEL_QUEUE_COMPUTE, &qB));
    REQUIRE_OK(accel_signal_create(nt_own_dev, 0, &go));
    REQUIRE_OK(accel_signal_create(nt_own_dev, 0, &sA));
    REQUIRE_OK(accel_signal_create(devB, 0, &aDone));
    REQUIRE_OK(accel_signal_create(devB, 0, &bDone));
    accel_queue_wait(qB, sA, 1);
    accel_queue_signal(qB, bDone, 1);
    CHECK_OK(accel_queue_submit(qB));   /* parks */
    accel_queue_wait(qA, go, 1);
    accel_queue_host_call(qA, nt_destroy_own_device, NULL);
    CHECK_OK(accel_queue_alloc(qA, 64, ACCEL_MEMORY_HOST, &b));   /* its point comes after the destroy */
    accel_queue_fill(qA, b, 0, 64, 3);
    accel_queue_free(qA, b);
    accel_queue_signal(qA, sA, 1);
    accel_queue_signal(qA, aDone, 1);
    CHECK_OK(accel_queue_submit(qA));
    CHECK_OK(accel_signal_set(go, 1));
    CHECK_EQ_U64(accel_signal_value(aDone), 1);
    CHECK_EQ_U64(accel_signal_value(bDone), 1);   /* before: failed with DEVICE_LOST as an orphan */
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);   /* before: the root made after the destroy stayed */
    accel_device_destroy(devB);
}

/* One raise (a set of g) wakes a queue of device 1 and one of device 2. Device 1's loop runs first; its
   host call waits (wait, finish, wait_many, destroy) for what device 1's other queue signals once device
   2's woken queue has run. Device 2 was on the raise's list of loops still to run, not on the stack, so
   the wait's drain did not run it: a false DEADLOCK (or, for the destroy, a dropped batch and a failed
   signal), in one order of submits of the two (helper 98). */
static accel_signal* nt_two_sa;
static accel_queue* nt_two_q1b;
static accel_result nt_two_r;
static int nt_two_how;
static void nt_two_host(void* u) {
    accel_signal* ss[1];
    uint64_t v[1] = { 1 };
    (void)u;
    ss[0] = nt_two_sa;
    if (nt_two_how == 0) nt_two_r = accel_signal_wait(nt_two_sa, 1, ACCEL_WAIT_FOREVER);
    else if (nt_two_how == 1) nt_two_r = accel_queue_finish(nt_two_q1b, ACCEL_WAIT_FOREVER);
    else if (nt_two_how == 2) nt_two_r = accel_signal_wait_many(ss, v, 1, false, 1000000000ull, NULL);
    else { accel_queue_destroy(nt_two_q1b); nt_two_r = ACCEL_OK; }
}
TEST(nt_wait_runs_a_device_a_raise_woke_before_its_loop) {
    NT_ONLY();
    for (int how = 0; how < 4; how++)
        for (int order = 0; order < 2; order++) {
            accel_device *d1, *d2;
            accel_queue *q1a, *q2;
            accel_signal *g, *sb, *done;
            REQUIRE_OK(test_device_create(&d1));
            REQUIRE_OK(test_device_create(&d2));
            REQUIRE_OK(accel_queue_create(d1, ACCEL_QUEUE_COMPUTE, &q1a));
            REQUIRE_OK(accel_queue_create(d1, ACCEL_QUEUE_COMPUTE, &nt_two_q1b));
            REQUIRE_OK(accel_queue_create(d2, ACCEL_QUEUE_COMPUTE, &q2));
            REQUIRE_OK(accel_signal_create(d1, 0, &g));
            REQUIRE_OK(accel_signal_create(d1, 0, &nt_two_sa));
            REQUIRE_OK(accel_signal_create(d1, 0, &done));
            REQUIRE_OK(accel_signal_create(d2, 0, &sb));
            nt_two_how = how;
            nt_two_r = ACCEL_ERROR_BACKEND;
            accel_queue_wait(nt_two_q1b, sb, 1);
            accel_queue_signal(nt_two_q1b, nt_two_sa, 1);
            CHECK_OK(accel_queue_submit(nt_two_q1b));
            for (int k = 0; k < 2; k++) {
                if (k == order) {
                    accel_queue_wait(q2, g, 1);
                    accel_queue_signal(q2, sb, 1);
                    CHECK_OK(accel_queue_submit(q2));
                } else {
                    accel_queue_wait(q1a, g, 1);
                    accel_queue_host_call(q1a, nt_two_host, NULL);
                    accel_queue_signal(q1a, done, 1);
                    CHECK_OK(accel_queue_submit(q1a));
                }
            }
            CHECK_OK(accel_signal_set(g, 1));
            if (!CHECK_RESULT(nt_two_r, ACCEL_OK)) fprintf(stderr, "    call %d, order %d\n", how, order);
            CHECK_EQ_U64(accel_signal_value(done), 1);
            CHECK_EQ_U64(accel_signal_value(nt_two_sa), 1);   /* the destroy ran its batch, not dropped it */
            accel_device_destroy(d1);
            accel_device_destroy(d2);
        }
}

/* A host call's wait runs no more than it needs: hA (device A) waits for sy, which A's other queue sets;
   hB (device B, woken by the same set) waits for sa2, which A sets after hA. Run inside hA's wait, hB
   could only end after hA returns (its frame is below): a drain that ran hB once sy was set already
   gave it DEADLOCK, in one of the six submit orders. The threaded build gives OK in all. */
static accel_signal *nt_need_sy, *nt_need_sa2;
static accel_result nt_need_ra, nt_need_rb;
static void nt_need_ha(void* u) {
    (void)u;
    nt_need_ra = accel_signal_wait(nt_need_sy, 1, ACCEL_WAIT_FOREVER);
}
static void nt_need_hb(void* u) {
    (void)u;
    nt_need_rb = accel_signal_wait(nt_need_sa2, 1, ACCEL_WAIT_FOREVER);
}
TEST(nt_nested_wait_runs_only_what_it_needs) {
    static const int seq[6][3] = { { 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 },
                                   { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 } };
    NT_ONLY();
    for (int order = 0; order < 6; order++) {
        accel_device *a, *b, *s;
        accel_queue *qa, *qa2, *qb;
        accel_signal* g;
        REQUIRE_OK(test_device_create(&a));
        REQUIRE_OK(test_device_create(&b));
        REQUIRE_OK(test_device_create(&s));
        REQUIRE_OK(accel_queue_create(a, ACCEL_QUEUE_COMPUTE, &qa));
        REQUIRE_OK(accel_queue_create(a, ACCEL_QUEUE_COMPUTE, &qa2));
        REQUIRE_OK(accel_queue_create(b, ACCEL_QUEUE_COMPUTE, &qb));
        REQUIRE_OK(accel_signal_create(s, 0, &g));
        REQUIRE_OK(accel_signal_create(s, 0, &nt_need_sy));
        REQUIRE_OK(accel_signal_create(s, 0, &nt_need_sa2));
        nt_need_ra = nt_need_rb = ACCEL_ERROR_BACKEND;
        for (int k = 0; k < 3; k++) {
            accel_queue* q = seq[order][k] == 0 ? qa : seq[order][k] == 1 ? qa2 : qb;
            accel_queue_wait(q, g, 1);
            if (q == qa) accel_queue_host_call(qa, nt_need_ha, NULL);
            if (q == qb) accel_queue_host_call(qb, nt_need_hb, NULL);
            accel_queue_signal(q, q == qa ? nt_need_sa2 : q == qa2 ? nt_need_sy : g, q == qb ? 2 : 1);
            CHECK_OK(accel_queue_submit(q));
        }
        CHECK_OK(accel_signal_set(g, 1));
        if (!CHECK_RESULT(nt_need_ra, ACCEL_OK) || !CHECK_RESULT(nt_need_rb, ACCEL_OK))
            fprintf(stderr, "    order %d\n", order);
        CHECK_EQ_U64(accel_signal_value(g), 2);
        CHECK_EQ_U64(accel_signal_value(nt_need_sa2), 1);
        accel_device_destroy(a);
        accel_device_destroy(b);
        accel_device_destroy(s);
    }
}

int main(int argc, char** argv) {
    test_begin(argc, argv);
    RUN(nt_submit_runs_batch_inline);
    RUN(nt_satisfied_wait_in_a_host_call_runs_nothing_else);
    RUN(nt_wait_runs_a_device_a_raise_woke_before_its_loop);
    RUN(nt_nested_wait_runs_only_what_it_needs);
    RUN(nt_host_call_destroys_own_device_rest_of_batch_counts);
    RUN(nt_finish_of_a_queue_its_host_call_destroys);
    RUN(nt_finish_of_a_queue_whose_host_call_destroys_its_device);
    RUN(nt_finish_from_a_host_call_of_a_queue_that_destroys_itself);
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
    RUN(nt_host_call_waits_on_another_device_released_by_its_own);
    RUN(nt_host_call_finishes_a_queue_released_by_its_device);
    RUN(nt_host_call_destroys_queue_woken_by_same_set);
    RUN(nt_host_call_waits_on_queue_woken_by_same_set);
    RUN(nt_device_destroy_settles_every_queue_first);
    RUN(nt_host_call_destroys_queue_up_the_stack);
    RUN(nt_host_call_destroys_queue_of_running_kernel);
    RUN(nt_host_call_destroys_queue_waiting_up_the_stack);
    RUN(nt_host_call_destroys_device_up_the_stack);
    RUN(nt_host_call_destroys_device_of_submitting_queue);
    RUN(nt_host_call_destroys_own_queue);
    RUN(nt_host_call_destroys_own_device);
    RUN(nt_host_call_device_destroy_settles_every_queue_first);
    RUN(nt_traced_submit_destroys_its_device);
    RUN(nt_host_call_finishes_queue_up_the_stack);
    return test_end();
}
