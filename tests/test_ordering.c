/* tests/test_ordering.c — ordering on the device (issue 12, DESIGN 6.1): chains across queues where each
   kernel reads what the previous one wrote, a host set releasing a wait the device took, failure after
   hand-off (the work behind may run, every signal it signals reads failed with the same reason, nothing
   hangs), waits between the backend under test and the CPU backend in both directions, and the batch
   walk's limits (many signals in one batch). Runs on every backend: on the CPU backend the executor is
   the device, so the same expectations hold there with the v1 rule (nothing behind a failed wait runs). */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test.h"
#include "kernels.h"

enum { N = 1024 };

/* A long chain alternating two queues: step k waits for step k - 1 (the other queue's signal), adds one
   to every item, and signals k. Every step reads what the previous one wrote: the final buffer holds
   `steps` in every item only if the order and the memory visibility across queues hold. The whole chain
   is submitted before any of it can run (the first step waits on a gate the host opens last). */
static void chain_two_queues(uint32_t steps, int batch_per_step) {
    accel_device* dev;
    accel_queue* q[2];
    accel_program* add;
    accel_buffer* buf;
    accel_signal *s, *gate;
    uint32_t n = N;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q[0]));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q[1]));
    REQUIRE_OK(test_program_create(dev, TK_ADD_ONE, &add));
    REQUIRE_OK(test_buffer_create(dev, N * 4, ACCEL_MEMORY_DEVICE, &buf));
    REQUIRE_OK(test_buffer_set_u32(buf, N, 0));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    for (uint32_t k = 1; k <= steps; k++) {
        accel_queue* qk = q[k & 1];
        if (k == 1) accel_queue_wait(qk, gate, 1);
        else accel_queue_wait(qk, s, k - 1);
        accel_queue_exec(qk, add, &buf, 1, &n, 1, accel_exec_1d(N, 64));
        accel_queue_signal(qk, s, k);
        if (batch_per_step || k == steps || k == steps - 1) CHECK_OK(accel_queue_submit(qk));
    }
    CHECK_RESULT(accel_signal_wait(s, 1, 0), ACCEL_TIMEOUT);
    CHECK_OK(accel_signal_set(gate, 1));
    CHECK_OK(accel_signal_wait(s, steps, ACCEL_WAIT_FOREVER));
    CHECK_EQ_U64(accel_signal_value(s), steps);
    for (uint32_t i = 0; i < N; i += 97) CHECK_EQ_U64(test_buffer_u32(buf, i), steps);
    CHECK_EQ_U64(test_buffer_u32(buf, N - 1), steps);
    accel_device_destroy(dev);
}
TEST(two_queue_chain_each_step_reads_the_last) { chain_two_queues(300, 1); }
TEST(two_queue_chain_in_two_batches) { chain_two_queues(200, 0); }

/* The host sets a signal a queue waits on (on a GPU backend the device takes such a wait where it can
   watch the signal): nothing behind the wait runs before the set, everything runs after it. */
TEST(host_set_releases_a_queue_wait) {
    accel_device* dev;
    accel_queue* q;
    accel_program* add;
    accel_buffer* buf;
    accel_signal *gate, *done;
    uint32_t n = N;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(test_program_create(dev, TK_ADD_ONE, &add));
    REQUIRE_OK(test_buffer_create(dev, N * 4, ACCEL_MEMORY_DEVICE, &buf));
    REQUIRE_OK(test_buffer_set_u32(buf, N, 41));
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(dev, 0, &done));
    for (uint64_t round = 1; round <= 20; round++) {
        accel_queue_wait(q, gate, round);
        accel_queue_exec(q, add, &buf, 1, &n, 1, accel_exec_1d(N, 64));
        accel_queue_signal(q, done, round);
        CHECK_OK(accel_queue_submit(q));
        CHECK_RESULT(accel_signal_wait(done, round, 0), ACCEL_TIMEOUT);   /* still held */
        CHECK_EQ_U64(test_buffer_u32(buf, 0), 40 + round);
        CHECK_OK(accel_signal_set(gate, round));
        CHECK_OK(accel_signal_wait(done, round, ACCEL_WAIT_FOREVER));
        CHECK_EQ_U64(test_buffer_u32(buf, 0), 41 + round);
        CHECK_EQ_U64(test_buffer_u32(buf, N - 1), 41 + round);
    }
    accel_device_destroy(dev);
}

/* Commands on host memory (copies host to host and both ways, updates, fills) queued behind a device
   wait for a value only the host sets: submit returns at once, nothing runs before the gate, everything
   after it; a read of an unrelated device buffer meanwhile is not held up. (On an H100, cuMemcpy*Async
   with host memory on both sides ran on the CPU once the stream got there, blocking the call behind the
   wait for ever; a staging read on the waiting VkQueue did the same on NVIDIA's Vulkan driver.) */
TEST(host_memory_commands_behind_a_host_gate) {
    accel_device* dev;
    accel_queue* q;
    accel_buffer *h1, *h2, *d, *other;
    accel_signal *gate, *done;
    uint32_t words[4] = { 7, 8, 9, 10 };
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(test_buffer_create(dev, 64, ACCEL_MEMORY_HOST, &h1));
    REQUIRE_OK(test_buffer_create(dev, 64, ACCEL_MEMORY_HOST, &h2));
    REQUIRE_OK(test_buffer_create(dev, 64, ACCEL_MEMORY_DEVICE, &d));
    REQUIRE_OK(test_buffer_create(dev, 64, ACCEL_MEMORY_DEVICE, &other));
    REQUIRE_OK(test_buffer_set_u32(other, 16, 5));
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(dev, 0, &done));
    for (uint32_t round = 1; round <= 3; round++) {
        uint64_t t0;
        accel_queue_wait(q, gate, round);
        accel_queue_update(q, h1, 0, words, 16);       /* host staging -> host */
        accel_queue_copy(q, h2, 0, h1, 0, 16);         /* host -> host */
        accel_queue_update(q, d, 0, words, 16);        /* host staging -> device */
        accel_queue_copy(q, h2, 16, d, 0, 16);         /* device -> host */
        accel_queue_fill(q, h1, 32, 16, round);        /* a fill of host memory */
        accel_queue_copy(q, h2, 32, h1, 32, 16);       /* host -> host */
        accel_queue_signal(q, done, round);
        t0 = test_now_ns();
        CHECK_OK(accel_queue_submit(q));
        CHECK(test_now_ns() - t0 < 1000000000ull);
        CHECK_RESULT(accel_signal_wait(done, round, 0), ACCEL_TIMEOUT);    /* still held */
        CHECK_EQ_U64(test_buffer_u32(other, 0), 5);                        /* not held up */
        if (round == 1) CHECK_EQ_U64(test_buffer_u32(h2, 0), 0);           /* nothing ran */
        CHECK_OK(accel_signal_set(gate, round));
        CHECK_OK(accel_signal_wait(done, round, ACCEL_WAIT_FOREVER));
        for (uint32_t i = 0; i < 4; i++) {
            CHECK_EQ_U64(test_buffer_u32(h2, i), words[i]);
            CHECK_EQ_U64(test_buffer_u32(h2, 4 + i), words[i]);
            CHECK_EQ_U64(test_buffer_u32(h2, 8 + i), round);
        }
        words[0] += 100;   /* recorded data was copied at record time: this changes the next round only */
    }
    accel_device_destroy(dev);
}

/* One batch of 3,000 execs behind a wait for a value only the host sets: accel_queue_submit returns
   before the host sets it (a GPU's stream holds about a thousand commands not yet started, and an
   enqueue blocks while it is full: the CUDA backend hands the rest of the batch to the queue's worker;
   the mock driver's streams hold 1,024). A thread sets the gate after 5 s so that a submit that blocks
   fails the check instead of hanging; then every exec ran once. */
#if TEST_HAVE_THREADS
typedef struct late_set { accel_signal *gate, *cancel; } late_set;
static void late_set_main(void* p) {
    late_set* a = (late_set*)p;
    if (accel_signal_wait(a->cancel, 1, 5000000000ull) == ACCEL_TIMEOUT) accel_signal_set(a->gate, 1);
}
#endif
TEST(long_batch_behind_a_host_gate_does_not_block_submit) {
#if TEST_HAVE_THREADS
    enum { EXECS = 3000 };
    accel_device* dev;
    accel_queue* q;
    accel_program* add;
    accel_buffer* buf;
    accel_signal *gate, *done, *cancel;
    late_set a;
    test_thread th;
    uint32_t n = 64;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(test_program_create(dev, TK_ADD_ONE, &add));
    REQUIRE_OK(test_buffer_create(dev, 64 * 4, ACCEL_MEMORY_DEVICE, &buf));
    REQUIRE_OK(test_buffer_set_u32(buf, 64, 0));
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(dev, 0, &done));
    REQUIRE_OK(accel_signal_create(dev, 0, &cancel));
    a.gate = gate;
    a.cancel = cancel;
    REQUIRE(test_thread_start(&th, late_set_main, &a));
    accel_queue_wait(q, gate, 1);
    for (uint32_t i = 0; i < EXECS; i++) accel_queue_exec(q, add, &buf, 1, &n, 1, accel_exec_1d(64, 64));
    accel_queue_signal(q, done, 1);
    CHECK_OK(accel_queue_submit(q));
    CHECK_EQ_U64(accel_signal_value(gate), 0);   /* submit returned before the late set */
    CHECK_OK(accel_signal_set(cancel, 1));
    test_thread_join(&th);
    CHECK_RESULT(accel_signal_wait(done, 1, 0), ACCEL_TIMEOUT);   /* still held */
    CHECK_OK(accel_signal_set(gate, 1));
    CHECK_OK(accel_signal_wait(done, 1, ACCEL_WAIT_FOREVER));
    CHECK_EQ_U64(test_buffer_u32(buf, 0), EXECS);
    CHECK_EQ_U64(test_buffer_u32(buf, 63), EXECS);
    accel_device_destroy(dev);
#else
    SKIP("no threads");
#endif
}

/* One batch of 1,500 waits for values only the host sets, then a fill: accel_queue_submit returns before
   the host sets them. On CUDA with stream memory operations each is a GPU wait on the signal's mirror,
   and more of them than a stream holds (the mock's: 1,024) once blocked the submit in the driver: the
   stream's budget was checked between commands, never between waits. */
TEST(a_batch_of_more_host_waits_than_a_stream_holds_does_not_block_submit) {
#if TEST_HAVE_THREADS
    enum { WAITS = 1500 };
    accel_device* dev;
    accel_queue* q;
    accel_buffer* buf;
    accel_signal *gate, *done, *cancel;
    late_set a;
    test_thread th;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(test_buffer_create(dev, 64, ACCEL_MEMORY_DEVICE, &buf));
    REQUIRE_OK(test_buffer_set_u32(buf, 16, 0));
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(dev, 0, &done));
    REQUIRE_OK(accel_signal_create(dev, 0, &cancel));
    a.gate = gate;
    a.cancel = cancel;
    REQUIRE(test_thread_start(&th, late_set_main, &a));   /* sets gate to 1 after 5 s: the check fails */
    for (uint32_t k = 1; k <= WAITS; k++) accel_queue_wait(q, gate, k);
    accel_queue_fill(q, buf, 0, 64, 7);
    accel_queue_signal(q, done, 1);
    CHECK_OK(accel_queue_submit(q));
    CHECK_EQ_U64(accel_signal_value(gate), 0);   /* submit returned before the late set */
    CHECK_OK(accel_signal_set(cancel, 1));
    test_thread_join(&th);
    CHECK_OK(accel_signal_set(gate, WAITS - 1));
    CHECK_RESULT(accel_signal_wait(done, 1, 1000000), ACCEL_TIMEOUT);   /* still held by the last wait */
    CHECK_EQ_U64(test_buffer_u32(buf, 15), 0);
    CHECK_OK(accel_signal_set(gate, WAITS));
    CHECK_OK(accel_signal_wait(done, 1, 20000000000ull));
    CHECK_EQ_U64(test_buffer_u32(buf, 15), 7);
    accel_device_destroy(dev);
#else
    SKIP("no threads");
#endif
}

/* Many small batches, each only a wait on a host gate, then one long batch behind the gate. On CUDA
   with stream memory operations each wait is a GPU wait on the gate's mirror that the queue lists
   until it is known passed (64 entries at most: the newest takes in the later ones, passed with the
   point after the last it took in), and a queue with more than its budget of work behind such waits
   (768 stream operations) hands the rest of its batch to its worker, which goes on when the waits are
   passed: the budget ran out mid-batch, after a command and before any signal point, so nothing told
   the worker that the waits taken in were passed (a hang on the CUDA mock, found by a bigger budget in
   the benchmark's gated pipeline). */
/* A queue, a buffer of `words` zeroed words, a host gate and a signal for the end. */
typedef struct gate_scene {
    accel_device* dev;
    accel_queue* q;
    accel_buffer* buf;
    accel_signal *gate, *done;
} gate_scene;
static bool gate_scene_make(gate_scene* g, uint32_t words, accel_memory memory) {
    memset(g, 0, sizeof *g);
    return CHECK_OK(test_device_create(&g->dev)) &&
           CHECK_OK(accel_queue_create(g->dev, ACCEL_QUEUE_COMPUTE, &g->q)) &&
           CHECK_OK(test_buffer_create(g->dev, (size_t)words * 4, memory, &g->buf)) &&
           CHECK_OK(test_buffer_set_u32(g->buf, words, 0)) &&
           CHECK_OK(accel_signal_create(g->dev, 0, &g->gate)) &&
           CHECK_OK(accel_signal_create(g->dev, 0, &g->done));
}
TEST(many_waits_then_a_long_batch_behind_a_host_gate) {
    enum { WAITS = 100, FILLS = 1000 };
    gate_scene g;
    if (!gate_scene_make(&g, FILLS, ACCEL_MEMORY_DEVICE)) { accel_device_destroy(g.dev); return; }
    for (uint32_t k = 1; k <= WAITS; k++) {
        accel_queue_wait(g.q, g.gate, k);
        CHECK_OK(accel_queue_submit(g.q));
    }
    accel_queue_wait(g.q, g.gate, WAITS + 1);
    for (uint32_t i = 0; i < FILLS; i++) accel_queue_fill(g.q, g.buf, (size_t)i * 4, 4, i + 1);
    accel_queue_signal(g.q, g.done, 1);
    CHECK_OK(accel_queue_submit(g.q));
    CHECK_OK(accel_signal_set(g.gate, WAITS + 1));
    CHECK_OK(accel_signal_wait(g.done, 1, 20000000000ull));
    CHECK_OK(accel_queue_finish(g.q, 20000000000ull));
    CHECK_EQ_U64(test_buffer_u32(g.buf, 0), 1);
    CHECK_EQ_U64(test_buffer_u32(g.buf, FILLS - 1), FILLS);
    accel_signal_fail(g.gate, ACCEL_ERROR_BACKEND);   /* after a failed check: nothing stays parked */
    accel_device_destroy(g.dev);
}

/* Many more batches than a CUDA queue lists gates for, each behind its own step of a host gate, submitted
   ahead, then released one step at a time, each step checked before the next: past 64 listed waits the
   newest entry takes in the later ones, and past the budget of work behind them (768 stream operations)
   the rest waits on the queue's worker; as the first steps are released the budget frees and the rest
   goes in, behind waits listed again after the entry that took the others in. Every step must land, in
   order, and none before its gate. */
TEST(gated_steps_past_the_list_and_the_budget_release_one_by_one) {
    enum { STEPS = 320 };
    /* the list and the budget are CUDA's: under Vulkan's synchronization validation (a step takes 0.2 s
       there) past the list only */
    uint32_t steps = test_sync_validation() ? 80 : STEPS;
    gate_scene g;
    if (!gate_scene_make(&g, STEPS, ACCEL_MEMORY_HOST)) { accel_device_destroy(g.dev); return; }
    for (uint32_t k = 1; k <= steps; k++) {
        accel_queue_wait(g.q, g.gate, k);
        accel_queue_fill(g.q, g.buf, (size_t)(k - 1) * 4, 4, k);
        accel_queue_signal(g.q, g.done, k);
        CHECK_OK(accel_queue_submit(g.q));
    }
    CHECK_EQ_U64(accel_signal_value(g.done), 0);
    for (uint32_t k = 1; k <= steps; k++) {
        if (!CHECK_OK(accel_signal_set(g.gate, k))) break;
        if (!CHECK_OK(accel_signal_wait(g.done, k, 20000000000ull))) break;
        if (k < steps && !CHECK_EQ_U64(accel_signal_value(g.done), k)) break;   /* not past its g.gate */
        if (!CHECK_EQ_U64(test_buffer_u32(g.buf, k - 1), k)) break;
    }
    CHECK_OK(accel_queue_finish(g.q, 20000000000ull));
    CHECK_EQ_U64(test_buffer_u32(g.buf, steps - 1), steps);
    accel_signal_fail(g.gate, ACCEL_ERROR_BACKEND);   /* after a failed check: nothing stays parked */
    accel_device_destroy(g.dev);
}

/* A whole two-queue pipeline submitted ahead from one thread, behind a host gate: producer batch k waits
   for the consumer to free slot k - RING, fills the slot with k and signals full = k; consumer batch k
   waits for full = k, copies the slot out, adds one to a sum and signals free = k. On CUDA the waits of
   both queues watch the signals' mirrors (the promises sit behind the gate), which only the queues'
   workers raise as they reap: a stream filled to the driver's limit must not park the submitting
   thread (it never got to the consumer's batches) nor a worker (its queue's points, which release the
   other queue, were reaped by no one): both hung on the CUDA mock. A late thread opens the gate, then
   fails both signals (which releases every device wait), and the end is polled with a deadline, so
   that a hang fails a check (with a worker parked in the driver the program may still hang after it).
   On CUDA the end is polled through signal values (a host wait would reap the queues itself), and the
   pipeline runs once more traced, where the mirrors are raised by the host only, so the workers must
   reap (that run fails, then hangs, with a worker that enqueues into a full stream). */
#if TEST_HAVE_THREADS
typedef struct late_release { accel_signal *gate, *cancel, *full, *free_; } late_release;
static void late_release_main(void* p) {
    late_release* a = (late_release*)p;
    if (accel_signal_wait(a->cancel, 1, 5000000000ull) != ACCEL_TIMEOUT) return;
    accel_signal_set(a->gate, 1);
    if (accel_signal_wait(a->cancel, 2, 30000000000ull) != ACCEL_TIMEOUT) return;
    accel_signal_fail(a->full, ACCEL_ERROR_BACKEND);
    accel_signal_fail(a->free_, ACCEL_ERROR_BACKEND);
}
#endif
#if TEST_HAVE_THREADS
static void pipeline_ahead(const char* trace_path) {
    enum { STEPS = 600, RING = 4, SLOT = 64 };
    accel_device* dev;
    accel_queue *prod, *cons;
    accel_program* add;
    accel_buffer *ring, *out, *sum;
    accel_signal *gate, *full, *free_, *cancel;
    late_release a;
    test_thread th;
    uint32_t n = SLOT;
    uint64_t t0;
    accel_device* pace_dev;
    accel_signal* pace;
    accel_device_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.trace_path = trace_path;
    REQUIRE_OK(test_device_create_desc(desc, &dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &prod));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &cons));
    REQUIRE_OK(test_program_create(dev, TK_ADD_ONE, &add));
    REQUIRE_OK(test_buffer_create(dev, RING * SLOT * 4, ACCEL_MEMORY_DEVICE, &ring));
    REQUIRE_OK(test_buffer_create(dev, RING * SLOT * 4, ACCEL_MEMORY_DEVICE, &out));
    REQUIRE_OK(test_buffer_create(dev, SLOT * 4, ACCEL_MEMORY_DEVICE, &sum));
    REQUIRE_OK(test_buffer_set_u32(sum, SLOT, 0));
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(dev, 0, &full));
    REQUIRE_OK(accel_signal_create(dev, 0, &free_));
    REQUIRE_OK(accel_signal_create(dev, 0, &cancel));
    a.gate = gate; a.cancel = cancel; a.full = full; a.free_ = free_;
    REQUIRE(test_thread_start(&th, late_release_main, &a));
    for (uint32_t k = 1; k <= STEPS; k++) {
        size_t off = (size_t)(k % RING) * SLOT * 4;
        accel_queue_wait(prod, k > RING ? free_ : gate, k > RING ? k - RING : 1);
        accel_queue_fill(prod, ring, off, SLOT * 4, k);
        accel_queue_signal(prod, full, k);
        CHECK_OK(accel_queue_submit(prod));
    }
    for (uint32_t k = 1; k <= STEPS; k++) {
        size_t off = (size_t)(k % RING) * SLOT * 4;
        accel_queue_wait(cons, full, k);
        accel_queue_copy(cons, out, off, ring, off, SLOT * 4);
        accel_queue_exec(cons, add, &sum, 1, &n, 1, accel_exec_1d(SLOT, 64));
        accel_queue_signal(cons, free_, k);
        CHECK_OK(accel_queue_submit(cons));
    }
    CHECK_EQ_U64(accel_signal_value(gate), 0);   /* every submit returned before the late set */
    CHECK_OK(accel_signal_set(cancel, 1));
    CHECK_OK(accel_signal_set(gate, 1));
    if (strcmp(test_g.backend_name, "cuda") == 0) {   /* there a host wait would reap the queues itself */
        REQUIRE_OK(test_cpu_device_create(&pace_dev));   /* its signal paces the polling: a wait on it reaps nothing here */
        REQUIRE_OK(accel_signal_create(pace_dev, 0, &pace));
        for (t0 = test_now_ns(); accel_signal_value(free_) < STEPS && test_now_ns() - t0 < 60000000000ull;)
            accel_signal_wait(pace, 1, 1000000u);
        accel_device_destroy(pace_dev);
    } else {
        CHECK_OK(accel_signal_wait(free_, STEPS, 60000000000ull));
    }
    CHECK_EQ_U64(accel_signal_value(free_), STEPS);
    CHECK_OK(accel_signal_set(cancel, 2));
    test_thread_join(&th);
    CHECK_OK(accel_queue_finish(prod, ACCEL_WAIT_FOREVER));
    CHECK_OK(accel_queue_finish(cons, ACCEL_WAIT_FOREVER));
    for (uint32_t slot = 0; slot < RING; slot++) {
        uint32_t k = STEPS - ((STEPS - slot) % RING);   /* the last step that used the slot */
        CHECK_EQ_U64(test_buffer_u32(out, (size_t)slot * SLOT), k);
        CHECK_EQ_U64(test_buffer_u32(out, (size_t)slot * SLOT + SLOT - 1), k);
    }
    CHECK_EQ_U64(test_buffer_u32(sum, 0), STEPS);
    CHECK_EQ_U64(test_buffer_u32(sum, SLOT - 1), STEPS);
    accel_device_destroy(dev);
    if (trace_path) remove(trace_path);
}
#endif
TEST(pipeline_submitted_ahead_behind_a_host_gate) {
#if TEST_HAVE_THREADS
    char path[64];
    pipeline_ahead(NULL);
    snprintf(path, sizeof path, "accel_test_pipeline_%llu.json", (unsigned long long)(test_now_ns() % 1000000007u));
    /* traced, CUDA's mirrors are host-raised only; elsewhere it adds nothing, and on lavapipe under
       synchronization validation a traced pipeline stalls in the layer's own lock (seen before, not accel's) */
    if (!TEST_FAILED_SO_FAR() && strcmp(test_g.backend_name, "cuda") == 0) pipeline_ahead(path);
#else
    SKIP("no threads");
#endif
}

/* A wait on a failed signal drops the rest of its batch only when the queue gets there: after the waits
   and commands before it (on a GPU backend, a wait not reached yet in the same segment, or device work
   of an earlier segment). Before the gate is set, nothing after the first wait runs, neither the
   batch's signal fails nor the next batch runs; after it, the first fill ran, the signal reads failed
   with the failed wait's reason, and the next batch ran. */
TEST(failed_wait_waits_its_turn) {
    for (int shape = 0; shape < 2; shape++) {   /* 0: failed wait right behind the gate; 1: a fill between */
        accel_device* dev;
        accel_queue* q;
        accel_buffer* buf;
        accel_signal *gate, *bad, *mid, *next;
        REQUIRE_OK(test_device_create(&dev));
        REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
        REQUIRE_OK(test_buffer_create(dev, 64, ACCEL_MEMORY_HOST, &buf));
        REQUIRE_OK(test_buffer_set_u32(buf, 16, 0));
        REQUIRE_OK(accel_signal_create(dev, 0, &gate));
        REQUIRE_OK(accel_signal_create(dev, 0, &bad));
        REQUIRE_OK(accel_signal_create(dev, 0, &mid));
        REQUIRE_OK(accel_signal_create(dev, 0, &next));
        REQUIRE_OK(accel_signal_fail(bad, ACCEL_ERROR_BACKEND));
        accel_queue_wait(q, gate, 1);
        if (shape == 1) accel_queue_fill(q, buf, 0, 4, 0x11u);
        accel_queue_wait(q, bad, 1);
        accel_queue_fill(q, buf, 4, 4, 0x22u);
        accel_queue_signal(q, mid, 1);
        CHECK_OK(accel_queue_submit(q));
        accel_queue_fill(q, buf, 8, 4, 0x33u);
        accel_queue_signal(q, next, 1);
        CHECK_OK(accel_queue_submit(q));
        CHECK_RESULT(accel_signal_wait(next, 1, 100000000ull), TEST_HAVE_THREADS ? ACCEL_TIMEOUT : ACCEL_ERROR_DEADLOCK);
        CHECK_EQ_U64(accel_signal_value(mid), 0);       /* not failed before the queue got to the failed wait */
        CHECK_RESULT(accel_queue_finish(q, 0), ACCEL_TIMEOUT);
        CHECK_EQ_U64(test_buffer_u32(buf, 0), 0);
        CHECK_EQ_U64(test_buffer_u32(buf, 2), 0);
        CHECK_OK(accel_signal_set(gate, 1));
        CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
        CHECK_RESULT(accel_signal_wait(mid, 1, 0), ACCEL_ERROR_SIGNAL_FAILED);
        CHECK_EQ_U64(accel_signal_value(mid), accel_signal_value(bad));   /* the same reason */
        CHECK_OK(accel_signal_wait(next, 1, 0));
        CHECK_EQ_U64(test_buffer_u32(buf, 0), shape == 1 ? 0x11u : 0);
        CHECK_EQ_U64(test_buffer_u32(buf, 1), 0);       /* dropped */
        CHECK_EQ_U64(test_buffer_u32(buf, 2), 0x33u);
        accel_device_destroy(dev);
        if (TEST_FAILED_SO_FAR()) break;
    }
}

/* A device wait on a queue's promise, enqueued behind a host gate, outlives that queue: the producer
   queue is destroyed (its work done), new signals are made, then the gate opens and the wait is
   reached. On CUDA the wait watches the producer's progress word, which went back to a pool when the
   queue went: a new signal's word must not be that one (it started at the signal's value, 0, and the
   wait never ended). The test sets the new signals high after a timeout, so a failing run ends. */
TEST(device_wait_outlives_the_queue_it_waits_for) {
    accel_device* dev;
    accel_queue *prod, *cons;
    accel_program* slow;
    accel_buffer *out, *buf;
    accel_signal *gate, *s, *done, *fresh[8];
    uint32_t k[3] = { 2048, 3000, 7 };
    accel_result r;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &prod));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &cons));
    REQUIRE_OK(test_program_create(dev, TK_SLOW, &slow));
    REQUIRE_OK(test_buffer_create(dev, 2048 * 4, ACCEL_MEMORY_DEVICE, &out));
    REQUIRE_OK(test_buffer_create(dev, 64, ACCEL_MEMORY_HOST, &buf));
    REQUIRE_OK(test_buffer_set_u32(buf, 16, 0));
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    REQUIRE_OK(accel_signal_create(dev, 0, &done));
    accel_queue_exec(prod, slow, &out, 1, k, 3, accel_exec_1d(2048, 32));   /* still running below */
    accel_queue_signal(prod, s, 1);
    CHECK_OK(accel_queue_submit(prod));
    accel_queue_wait(cons, gate, 1);
    accel_queue_wait(cons, s, 1);
    accel_queue_fill(cons, buf, 0, 4, 9);
    accel_queue_signal(cons, done, 1);
    CHECK_OK(accel_queue_submit(cons));
    accel_queue_destroy(prod);                       /* waits for its work */
    CHECK_OK(accel_signal_wait(s, 1, 0));
    for (int i = 0; i < 8; i++) REQUIRE_OK(accel_signal_create(dev, 0, &fresh[i]));
    CHECK_OK(accel_signal_set(gate, 1));
    r = accel_signal_wait(done, 1, 5000000000ull);
    CHECK_OK(r);
    if (r != ACCEL_OK) for (int i = 0; i < 8; i++) accel_signal_set(fresh[i], 1u << 20);   /* release a stuck wait */
    CHECK_OK(accel_queue_finish(cons, ACCEL_WAIT_FOREVER));
    CHECK_EQ_U64(test_buffer_u32(buf, 0), 9);
    accel_device_destroy(dev);
}

/* A queue waits for s >= 5 while the first promise of s (10) sits on a queue held by a gate only the
   host sets: the wait is released when s reaches 5 by another route (a host set, then another queue's
   signal), as on the CPU backend, not when the held promise comes (on CUDA the wait watched the held
   queue's progress: released only by the gate, a deadlock when the host waits first). */
TEST(device_wait_released_by_another_route) {
    for (int route = 0; route < 3; route++) {
        accel_device* dev;
        accel_queue *q1, *q2, *q3;
        accel_buffer* buf;
        accel_signal *gate, *s, *done;
        REQUIRE_OK(test_device_create(&dev));
        REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q1));
        REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q2));
        REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q3));
        REQUIRE_OK(test_buffer_create(dev, 64, ACCEL_MEMORY_DEVICE, &buf));
        REQUIRE_OK(accel_signal_create(dev, 0, &gate));
        REQUIRE_OK(accel_signal_create(dev, 0, &s));
        REQUIRE_OK(accel_signal_create(dev, 0, &done));
        if (route < 2) accel_queue_wait(q1, gate, 1);
        else {   /* route 2: no gate, a long kernel before the promise (Vulkan: the host signals the
                    semaphore below its pending signal operation) */
            accel_program* slow;
            accel_buffer* out;
            uint32_t k[3] = { 2048, 3000, 7 };
            REQUIRE_OK(test_program_create(dev, TK_SLOW, &slow));
            REQUIRE_OK(test_buffer_create(dev, 2048 * 4, ACCEL_MEMORY_DEVICE, &out));
            accel_queue_exec(q1, slow, &out, 1, k, 3, accel_exec_1d(2048, 32));
        }
        accel_queue_fill(q1, buf, 0, 4, 1);
        accel_queue_signal(q1, s, 10);
        CHECK_OK(accel_queue_submit(q1));
        accel_queue_wait(q3, s, 5);
        accel_queue_fill(q3, buf, 8, 4, 3);
        accel_queue_signal(q3, done, 1);
        CHECK_OK(accel_queue_submit(q3));
        if (route != 1) CHECK_OK(accel_signal_set(s, 5));
        else {
            accel_queue_fill(q2, buf, 16, 4, 2);
            accel_queue_signal(q2, s, 5);
            CHECK_OK(accel_queue_submit(q2));
        }
        CHECK_OK(accel_signal_wait(done, 1, 10000000000ull));
        CHECK_EQ_U64(test_buffer_u32(buf, 2), 3);
        if (route < 2) CHECK_EQ_U64(test_buffer_u32(buf, 0), 0);   /* the gated promise has not run */
        CHECK_OK(accel_signal_set(gate, 1));
        CHECK_OK(accel_signal_wait(s, 10, 10000000000ull));
        CHECK_EQ_U64(test_buffer_u32(buf, 0), 1);
        accel_device_destroy(dev);
    }
}

/* A queue's next batch waits for s >= 5, which its own pending batch promises (10), and the host sets 5
   meanwhile (before that batch's submit, or after it): the next batch still runs after the first
   completed (in-order queue), reading all it wrote. Vulkan left out the wait on the queue's own
   timeline there (the semaphore wait implied it), and a host raise below the pending promise is
   signalled at once: on a GPU that runs submissions concurrently the copy overtook the slow kernel
   (lavapipe runs one VkQueue's submissions one by one, so only a GPU shows it; helper 95). */
TEST(own_promise_raised_below_by_the_host_keeps_queue_order) {
    for (int after = 0; after < 2; after++) {
        accel_device* dev;
        accel_queue* q;
        accel_program *slow, *copy;
        accel_buffer *x, *y, *xy[2];
        accel_signal* s;
        uint32_t k[3] = { N, 4000, 11 }, n = N, bad = 0;
        REQUIRE_OK(test_device_create(&dev));
        REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
        REQUIRE_OK(test_program_create(dev, TK_SLOW, &slow));
        REQUIRE_OK(test_program_create(dev, TK_COPY_U32, &copy));
        REQUIRE_OK(test_buffer_create(dev, N * 4, ACCEL_MEMORY_DEVICE, &x));
        REQUIRE_OK(test_buffer_create(dev, N * 4, ACCEL_MEMORY_HOST, &y));
        REQUIRE_OK(accel_signal_create(dev, 0, &s));
        accel_queue_exec(q, slow, &x, 1, k, 3, accel_exec_1d(N, 64));
        accel_queue_signal(q, s, 10);
        CHECK_OK(accel_queue_submit(q));
        if (!after) CHECK_OK(accel_signal_set(s, 5));
        xy[0] = y; xy[1] = x;
        accel_queue_wait(q, s, 5);
        accel_queue_exec(q, copy, xy, 2, &n, 1, accel_exec_1d(N, 64));
        accel_queue_signal(q, s, 20);
        CHECK_OK(accel_queue_submit(q));
        if (after) CHECK_OK(accel_signal_set(s, 5));
        CHECK_OK(accel_signal_wait(s, 20, 30000000000ull));
        static uint32_t got[N];
        CHECK_OK(accel_buffer_read(y, 0, got, sizeof got));
        for (uint32_t i = 0; i < N; i++) bad += got[i] != test_slow_hash(i ^ 11u, 4000);
        if (!CHECK_EQ_INT((int)bad, 0)) fprintf(stderr, "    set %s the second submit\n", after ? "after" : "before");
        accel_device_destroy(dev);
    }
}

/* Out of host memory while a queue waits on the device for a gate only this thread sets: submit returns
   at once (OK, or OUT_OF_MEMORY with nothing of the batch run), never waits for the stream (on CUDA the
   signal points' ring could not grow and the enqueuer synchronised with the parked stream: a hang). */
TEST(out_of_memory_behind_a_device_wait_returns) {
    test_alloc_state st;
    accel_device_desc desc;
    accel_device* dev;
    accel_queue* q;
    accel_buffer* buf;
    accel_signal *gate, *s;
    accel_result r;
    uint64_t t0;
    test_alloc_init(&st);
    memset(&desc, 0, sizeof desc);
    desc.allocator = test_allocator(&st);
    REQUIRE_OK(test_device_create_desc(desc, &dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(test_buffer_create(dev, 64, ACCEL_MEMORY_DEVICE, &buf));
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    accel_queue_wait(q, gate, 1);
    accel_queue_fill(q, buf, 0, 64, 1);
    accel_queue_signal(q, s, 1);
    CHECK_OK(accel_queue_submit(q));
    for (uint32_t i = 0; i < 40; i++) {   /* more signal points than any first allocation holds */
        accel_queue_fill(q, buf, 0, 4, i + 2);
        accel_queue_signal(q, s, i + 2);
    }
    atomic_store(&st.fail_after, 0);      /* every allocation from here fails */
    t0 = test_now_ns();
    r = accel_queue_submit(q);
    CHECK(test_now_ns() - t0 < 2000000000ull);
    atomic_store(&st.fail_after, -1);
    CHECK(r == ACCEL_OK || r == ACCEL_ERROR_OUT_OF_MEMORY);
    CHECK_OK(accel_signal_set(gate, 1));
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    CHECK_EQ_U64(test_buffer_u32(buf, 0), r == ACCEL_OK ? 41 : 1);
    CHECK_EQ_U64(accel_signal_value(s), r == ACCEL_OK ? 41 : 1);
    accel_device_destroy(dev);
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
}

/* Two devices on one physical device: while a queue of the first waits on the device for a gate only the
   host sets, the second makes and releases buffers (device and host memory), a program and a whole
   device's worth of objects, and runs work; none of it is held up by the first one's wait. (On CUDA,
   cuMemFree, cuMemFreeHost and cuModuleUnload wait for every stream of the context, and both devices
   use the primary context: the releases must wait for the other device's GPU waits too.) */
TEST(second_device_releases_while_the_first_waits) {
    accel_device *a, *b;
    accel_queue *qa, *qb;
    accel_program *add_a, *add_b;
    accel_buffer *ba, *bb, *tmp;
    accel_signal *gate, *done, *done_b;
    uint32_t n = N;
    uint64_t t0;
    REQUIRE_OK(test_device_create(&a));
    REQUIRE_OK(test_device_create(&b));
    REQUIRE_OK(accel_queue_create(a, ACCEL_QUEUE_COMPUTE, &qa));
    REQUIRE_OK(test_program_create(a, TK_ADD_ONE, &add_a));
    REQUIRE_OK(test_buffer_create(a, N * 4, ACCEL_MEMORY_DEVICE, &ba));
    REQUIRE_OK(accel_signal_create(a, 0, &gate));
    REQUIRE_OK(accel_signal_create(a, 0, &done));
    accel_queue_wait(qa, gate, 1);
    accel_queue_exec(qa, add_a, &ba, 1, &n, 1, accel_exec_1d(N, 64));
    accel_queue_signal(qa, done, 1);
    CHECK_OK(accel_queue_submit(qa));
    CHECK_RESULT(accel_signal_wait(done, 1, 0), ACCEL_TIMEOUT);
    t0 = test_now_ns();
    for (int round = 0; round < 3; round++) {   /* the second device: make, use, release */
        REQUIRE_OK(accel_queue_create(b, ACCEL_QUEUE_COMPUTE, &qb));
        REQUIRE_OK(test_program_create(b, TK_ADD_ONE, &add_b));
        REQUIRE_OK(test_buffer_create(b, N * 4, ACCEL_MEMORY_DEVICE, &bb));
        REQUIRE_OK(accel_signal_create(b, 0, &done_b));
        accel_queue_exec(qb, add_b, &bb, 1, &n, 1, accel_exec_1d(N, 64));
        accel_queue_update(qb, bb, 0, &n, 4);
        accel_queue_signal(qb, done_b, 1);
        CHECK_OK(accel_queue_submit(qb));
        CHECK_OK(accel_signal_wait(done_b, 1, ACCEL_WAIT_FOREVER));
        CHECK_EQ_U64(test_buffer_u32(bb, 0), N);
        CHECK_EQ_U64(test_buffer_u32(bb, N - 1), 1);
        REQUIRE_OK(test_buffer_create(b, 4096, ACCEL_MEMORY_HOST, &tmp));
        accel_buffer_destroy(tmp);
        accel_buffer_destroy(bb);
        accel_program_destroy(add_b);
        accel_signal_destroy(done_b);
        accel_queue_destroy(qb);
    }
    REQUIRE_OK(test_buffer_create(b, 4096, ACCEL_MEMORY_DEVICE, &tmp));   /* left for the destroy */
    accel_device_destroy(b);
    CHECK(test_now_ns() - t0 < 30000000000ull);
    CHECK_RESULT(accel_signal_wait(done, 1, 0), ACCEL_TIMEOUT);   /* still held */
    CHECK_EQ_U64(test_buffer_u32(ba, 0), 0);
    CHECK_OK(accel_signal_set(gate, 1));
    CHECK_OK(accel_signal_wait(done, 1, ACCEL_WAIT_FOREVER));
    CHECK_EQ_U64(test_buffer_u32(ba, 0), 1);
    CHECK_EQ_U64(test_buffer_u32(ba, N - 1), 1);
    accel_device_destroy(a);
}

/* Failure after hand-off: two queues wait (one on a gate, the other on the first one's signal), and the
   gate fails. The work behind the waits may run on a GPU backend (DESIGN 6.1), never on the CPU backend;
   everything they signal reads failed with the same reason; host waits, wait_many and later queue waits
   see it; finish returns; the queues work afterwards. */
TEST(failure_after_hand_off_flows_down_with_its_reason) {
    accel_device* dev;
    accel_queue *q0, *q1, *q2;
    accel_program* add;
    accel_buffer *buf, *buf1;
    accel_signal *gate, *a, *b, *c, *ok;
    uint32_t n = N;
    uint64_t failed = ACCEL_SIGNAL_MAX + 1 + (uint64_t)-(int)ACCEL_ERROR_BACKEND;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q0));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q1));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q2));
    REQUIRE_OK(test_program_create(dev, TK_ADD_ONE, &add));
    REQUIRE_OK(test_buffer_create(dev, N * 4, ACCEL_MEMORY_DEVICE, &buf));
    REQUIRE_OK(test_buffer_set_u32(buf, N, 0));
    REQUIRE_OK(test_buffer_create(dev, N * 4, ACCEL_MEMORY_DEVICE, &buf1));   /* q1's: once failed, q1 */
    REQUIRE_OK(test_buffer_set_u32(buf1, N, 0));                             /* may run beside q0 (CUDA) */
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(dev, 0, &a));
    REQUIRE_OK(accel_signal_create(dev, 0, &b));
    REQUIRE_OK(accel_signal_create(dev, 0, &c));
    REQUIRE_OK(accel_signal_create(dev, 0, &ok));
    accel_queue_wait(q0, gate, 1);
    accel_queue_exec(q0, add, &buf, 1, &n, 1, accel_exec_1d(N, 64));
    accel_queue_signal(q0, a, 1);
    CHECK_OK(accel_queue_submit(q0));
    accel_queue_wait(q1, a, 1);
    accel_queue_exec(q1, add, &buf1, 1, &n, 1, accel_exec_1d(N, 64));
    accel_queue_signal(q1, b, 1);
    accel_queue_signal(q1, c, 5);
    CHECK_OK(accel_queue_submit(q1));
    accel_queue_wait(q2, c, 5);          /* a third queue behind, submitted after the failure below */
    CHECK_RESULT(accel_signal_wait(b, 1, 0), ACCEL_TIMEOUT);
    CHECK_OK(accel_signal_fail(gate, ACCEL_ERROR_BACKEND));
    accel_queue_signal(q2, ok, 1);
    CHECK_OK(accel_queue_submit(q2));
    CHECK_RESULT(accel_signal_wait(b, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
    CHECK_RESULT(accel_signal_wait(a, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
    CHECK_RESULT(accel_signal_wait(c, 5, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);   /* raised after b */
    CHECK_EQ_U64(accel_signal_value(a), failed);
    CHECK_EQ_U64(accel_signal_value(b), failed);
    CHECK_EQ_U64(accel_signal_value(c), failed);
    {
        accel_signal* both[2] = { a, c };
        uint64_t vals[2] = { 1, 5 };
        uint32_t first = 9;
        CHECK_RESULT(accel_signal_wait_many(both, vals, 2, false, ACCEL_WAIT_FOREVER, &first), ACCEL_ERROR_SIGNAL_FAILED);
        CHECK(first < 2);
    }
    CHECK_RESULT(accel_signal_wait(ok, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);   /* q2's wait saw it */
    CHECK_OK(accel_queue_finish(q0, ACCEL_WAIT_FOREVER));
    CHECK_OK(accel_queue_finish(q1, ACCEL_WAIT_FOREVER));
    CHECK_OK(accel_queue_finish(q2, ACCEL_WAIT_FOREVER));
    {   /* CPU: nothing behind the failed waits ran; a GPU backend may have run both adds */
        uint32_t v = test_buffer_u32(buf, 7), v1 = test_buffer_u32(buf1, 7);
        if (test_backend_is_cpu()) CHECK(v == 0 && v1 == 0);
        else CHECK(v <= 1 && v1 <= 1);
    }
    /* the queues still work */
    {
        accel_signal* fine;
        REQUIRE_OK(accel_signal_create(dev, 0, &fine));
        accel_queue_exec(q0, add, &buf, 1, &n, 1, accel_exec_1d(N, 64));
        accel_queue_signal(q0, fine, 1);
        CHECK_OK(accel_queue_submit(q0));
        accel_queue_wait(q1, fine, 1);
        accel_queue_exec(q1, add, &buf, 1, &n, 1, accel_exec_1d(N, 64));
        accel_queue_signal(q1, fine, 2);
        CHECK_OK(accel_queue_submit(q1));
        CHECK_OK(accel_signal_wait(fine, 2, ACCEL_WAIT_FOREVER));
    }
    accel_device_destroy(dev);
}

/* Failure after hand-off into another device's signals: a batch of device a that handed its wait to the
   device signals more signals of device b than the core keeps inline (32); when the gate fails, each of
   them fails through the whole raise, device side included: b's queue, which waits for the last one
   (on the device where the backend can), sees the failure. A raise of the host word alone left that
   waiter hanging. Then the same with the signals in two batches of two queues. */
TEST(failure_after_hand_off_reaches_many_signals_of_another_device) {
    enum { NS = 40 };
    accel_device *a, *b;
    accel_queue *qa, *qa2, *qb;
    accel_signal *gate, *out, *s[NS];
    uint64_t failed = ACCEL_SIGNAL_MAX + 1 + (uint64_t)-(int)ACCEL_ERROR_BACKEND;
    REQUIRE_OK(test_device_create(&a));
    REQUIRE_OK(test_device_create(&b));
    REQUIRE_OK(accel_queue_create(a, ACCEL_QUEUE_COMPUTE, &qa));
    REQUIRE_OK(accel_queue_create(a, ACCEL_QUEUE_COMPUTE, &qa2));
    REQUIRE_OK(accel_queue_create(b, ACCEL_QUEUE_COMPUTE, &qb));
    REQUIRE_OK(accel_signal_create(a, 0, &gate));
    REQUIRE_OK(accel_signal_create(b, 0, &out));
    for (int i = 0; i < NS; i++) REQUIRE_OK(accel_signal_create(b, 0, &s[i]));
    accel_queue_wait(qa, gate, 1);
    for (int i = 0; i < NS; i++) accel_queue_signal(qa, s[i], 1);
    CHECK_OK(accel_queue_submit(qa));
    accel_queue_wait(qa2, gate, 1);
    for (int i = NS - 1; i >= 0; i--) accel_queue_signal(qa2, s[i], 2);
    CHECK_OK(accel_queue_submit(qa2));
    accel_queue_wait(qb, s[NS - 1], 2);
    accel_queue_signal(qb, out, 1);
    CHECK_OK(accel_queue_submit(qb));
    CHECK_RESULT(accel_signal_wait(out, 1, 0), ACCEL_TIMEOUT);
    CHECK_OK(accel_signal_fail(gate, ACCEL_ERROR_BACKEND));
    CHECK_RESULT(accel_signal_wait(out, 1, 20000000000ull), ACCEL_ERROR_SIGNAL_FAILED);
    for (int i = 0; i < NS; i++) {   /* the queues' threads may still be raising the others */
        CHECK_RESULT(accel_signal_wait(s[i], 1, 20000000000ull), ACCEL_ERROR_SIGNAL_FAILED);
        CHECK_EQ_U64(accel_signal_value(s[i]), failed);
    }
    CHECK_OK(accel_queue_finish(qb, 20000000000ull));
    CHECK_OK(accel_queue_finish(qa, 20000000000ull));
    CHECK_OK(accel_queue_finish(qa2, 20000000000ull));
    accel_device_destroy(a);
    accel_device_destroy(b);
}

/* A failure that comes before the work behind a device wait is released: its signals read failed before
   any waiter is released (no waiter ever sees the value first and the failure later). Repeated, with a
   host thread polling the downstream signal meanwhile. */
#if TEST_HAVE_THREADS
typedef struct poll_arg { accel_signal* s; atomic_int stop, saw_value; } poll_arg;
static void poll_main(void* p) {
    poll_arg* a = (poll_arg*)p;
    while (!atomic_load(&a->stop)) {
        uint64_t v = accel_signal_value(a->s);
        if (v == 1) atomic_store(&a->saw_value, 1);
    }
}
#endif
TEST(failure_is_seen_before_the_work_it_released) {
#if TEST_HAVE_THREADS
    accel_device* dev;
    accel_queue* q;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    for (int round = 0; round < 50; round++) {
        accel_signal *gate, *out;
        poll_arg a;
        test_thread th;
        REQUIRE_OK(accel_signal_create(dev, 0, &gate));
        REQUIRE_OK(accel_signal_create(dev, 0, &out));
        accel_queue_wait(q, gate, 1);
        accel_queue_signal(q, out, 1);
        CHECK_OK(accel_queue_submit(q));
        a.s = out;
        atomic_init(&a.stop, 0);
        atomic_init(&a.saw_value, 0);
        REQUIRE(test_thread_start(&th, poll_main, &a));
        CHECK_OK(accel_signal_fail(gate, ACCEL_ERROR_BACKEND));
        CHECK_RESULT(accel_signal_wait(out, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
        CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
        atomic_store(&a.stop, 1);
        test_thread_join(&th);
        CHECK_EQ_INT(atomic_load(&a.saw_value), 0);
        accel_signal_destroy(gate);
        accel_signal_destroy(out);
        if (TEST_FAILED_SO_FAR()) break;
    }
    accel_device_destroy(dev);
#else
    SKIP("no threads");
#endif
}

/* Waits between the backend under test and the CPU backend, both directions, in one pipeline:
   CPU queue fills -> signal c; test queue waits c, copies, signal t; CPU queue waits t, checks. */
TEST(mixed_waits_cpu_to_device_and_back) {
    accel_device *dev, *cpu;
    accel_queue *q, *cq;
    accel_buffer *hb, *db, *out;
    accel_signal *c, *t;
    static uint32_t got[N];
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(test_cpu_device_create(&cpu));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_queue_create(cpu, ACCEL_QUEUE_COMPUTE, &cq));
    REQUIRE_OK(test_buffer_create(dev, N * 4, ACCEL_MEMORY_HOST, &hb));
    REQUIRE_OK(test_buffer_create(dev, N * 4, ACCEL_MEMORY_DEVICE, &db));
    REQUIRE_OK(test_buffer_create(dev, N * 4, ACCEL_MEMORY_HOST, &out));
    REQUIRE_OK(accel_signal_create(cpu, 0, &c));
    REQUIRE_OK(accel_signal_create(dev, 0, &t));
    for (uint32_t round = 1; round <= 10; round++) {
        uint32_t* host = (uint32_t*)accel_buffer_map(hb);
        accel_queue_wait(q, c, 2 * round - 1);         /* the device queue waits on a CPU signal */
        accel_queue_copy(q, db, 0, hb, 0, N * 4);
        accel_queue_copy(q, out, 0, db, 0, N * 4);
        accel_queue_signal(q, t, round);
        CHECK_OK(accel_queue_submit(q));
        accel_queue_wait(cq, t, round);                /* a CPU queue waits on the device's signal */
        accel_queue_signal(cq, c, 2 * round);
        CHECK_OK(accel_queue_submit(cq));
        REQUIRE(host != NULL);
        for (uint32_t i = 0; i < N; i++) host[i] = i * round;
        CHECK_EQ_U64(accel_signal_value(t), round - 1);   /* held until the host set below */
        CHECK_OK(accel_signal_set(c, 2 * round - 1));
        CHECK_OK(accel_signal_wait(c, 2 * round, ACCEL_WAIT_FOREVER));
        CHECK_EQ_U64(accel_signal_value(t), round);
        REQUIRE_OK(accel_buffer_read(out, 0, got, sizeof got));
        int bad = 0;
        for (uint32_t i = 0; i < N; i++) bad += got[i] != i * round;
        CHECK_EQ_INT(bad, 0);
    }
    accel_device_destroy(dev);
    accel_device_destroy(cpu);
}

/* A GPU queue waits on a CPU signal that fails: the v1 rule where the wait is gated on the host
   (nothing behind runs; a CPU queue's executor as well); where it went to a GPU (device_waits of
   accel_device_peer_info: CUDA with stream memory operations) the work behind it may run (DESIGN
   6.1), and the signal after it fails with the reason either way. */
TEST(mixed_wait_on_a_failed_cpu_signal) {
    accel_device *dev, *cpu;
    accel_queue* q;
    accel_buffer* buf;
    accel_signal *c, *t;
    accel_peer_info pi;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(test_cpu_device_create(&cpu));
    REQUIRE_OK(accel_device_peer_info(dev, cpu, &pi));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(test_buffer_create(dev, 64, ACCEL_MEMORY_HOST, &buf));
    REQUIRE_OK(test_buffer_set_u32(buf, 16, 0));
    REQUIRE_OK(accel_signal_create(cpu, 0, &c));
    REQUIRE_OK(accel_signal_create(dev, 0, &t));
    accel_queue_wait(q, c, 1);
    accel_queue_fill(q, buf, 0, 64, 5);
    accel_queue_signal(q, t, 1);
    CHECK_OK(accel_queue_submit(q));
    CHECK_OK(accel_signal_fail(c, ACCEL_ERROR_DEVICE_LOST));
    CHECK_RESULT(accel_signal_wait(t, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
    CHECK_EQ_U64(accel_signal_value(t), ACCEL_SIGNAL_MAX + 1 + (uint64_t)-(int)ACCEL_ERROR_DEVICE_LOST);
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    if (!pi.device_waits || test_backend_is_cpu()) CHECK_EQ_U64(test_buffer_u32(buf, 3), 0);
    accel_device_destroy(dev);
    accel_device_destroy(cpu);
}

/* One batch that signals many distinct signals (issue 9, item 9: the Vulkan segment builder was
   quadratic in them, 40k signals took 4 s) and waits on many reached ones: submit stays fast and every
   signal arrives. */
TEST(batch_with_many_signals_and_waits) {
    enum { S = 40000, W = 64 };
    accel_device* dev;
    accel_queue* q;
    accel_signal** sig;
    uint64_t t0, dt;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    sig = (accel_signal**)calloc(S, sizeof *sig);
    REQUIRE(sig != NULL);
    uint32_t n = 0;   /* S, or as many as the device makes: NVIDIA's Vulkan driver refuses timeline semaphores
                         with OUT_OF_HOST_MEMORY somewhere below 40,000 (a clear error, not a hang) */
    accel_result cr = ACCEL_OK;
    while (n < S && (cr = accel_signal_create(dev, 0, &sig[n])) == ACCEL_OK) n++;
    if (n < S) {
        CHECK_RESULT(cr, ACCEL_ERROR_OUT_OF_MEMORY);
        fprintf(stderr, "    the device made %u signals of %d; the batch uses those\n", n, (int)S);
        REQUIRE(n >= 4 * W);
    }
    for (uint32_t i = 0; i < W; i++) accel_queue_signal(q, sig[i], 1);   /* producers of the waits below */
    CHECK_OK(accel_queue_submit(q));
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    for (uint32_t i = 0; i < W; i++) accel_queue_wait(q, sig[i], 1);     /* 64 waits already reached */
    for (uint32_t i = W; i < n; i++) accel_queue_signal(q, sig[i], 2 + (i & 3));
    t0 = test_now_ns();
    CHECK_OK(accel_queue_submit(q));
    dt = test_now_ns() - t0;
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    CHECK(dt < 2000000000ull);
    if (dt >= 2000000000ull) fprintf(stderr, "    submit of %u signals took %.2f s\n", n, (double)dt / 1e9);
    for (uint32_t i = W; i < n; i += 37) CHECK_EQ_U64(accel_signal_value(sig[i]), 2 + (i & 3));
    CHECK_EQ_U64(accel_signal_value(sig[n - 1]), 2 + ((n - 1) & 3));
    accel_device_destroy(dev);
    free(sig);
}

/* Destroy in the middle of device waits: a queue whose batch waits on the device for a gate nobody
   sets yet; the device is destroyed from another thread that fails the gate after a while (the
   documented remedy). Nothing hangs; the batch's signal reads failed. */
TEST(destroy_while_a_device_wait_is_pending) {
#if TEST_HAVE_THREADS
    accel_device* dev;
    accel_queue* q;
    accel_signal *gate, *s;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    accel_queue_wait(q, gate, 3);
    accel_queue_signal(q, s, 1);
    CHECK_OK(accel_queue_submit(q));
    CHECK_RESULT(accel_signal_wait(s, 1, 0), ACCEL_TIMEOUT);
    CHECK_OK(accel_signal_fail(gate, ACCEL_ERROR_BACKEND));
    CHECK_RESULT(accel_signal_wait(s, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
    accel_device_destroy(dev);
#else
    SKIP("no threads");
#endif
}

/* Queues created after another queue began waiting for a value only the host sets are not held up
   behind that wait: one that has nothing to do with it runs at once (COMPUTE and COPY), and one whose
   work is what raises the value the first waits for does not deadlock with it. (On Vulkan such a wait
   sat on the first queue's VkQueue while it was alone there; queues created later joined that VkQueue
   behind it.) */
TEST(queues_created_later_are_not_held_up_by_an_earlier_wait) {
    accel_device* dev;
    accel_queue *first, *compute, *copy, *later;
    accel_signal *gate, *done, *t, *tc, *s0, *s1, *s2;
    accel_buffer* b;
    accel_result r;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_signal_create(dev, 0, &tc));
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(dev, 0, &done));
    REQUIRE_OK(accel_signal_create(dev, 0, &t));
    REQUIRE_OK(accel_signal_create(dev, 0, &s0));
    REQUIRE_OK(accel_signal_create(dev, 0, &s1));
    REQUIRE_OK(accel_signal_create(dev, 0, &s2));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &first));   /* alone on the device */
    accel_queue_wait(first, gate, 1);
    accel_queue_wait(first, s1, 1);          /* a value nobody has promised yet */
    accel_queue_signal(first, done, 1);
    accel_queue_signal(first, s2, 1);
    REQUIRE_OK(accel_queue_submit(first));
    (void)accel_signal_wait(done, 1, 20000000ull);   /* 20 ms: it reached its wait */
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &compute));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COPY, &copy));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &later));
    REQUIRE_OK(test_buffer_create(dev, 256, ACCEL_MEMORY_DEVICE, &b));
    accel_queue_fill(compute, b, 0, 128, 7u);
    accel_queue_signal(compute, tc, 1);
    CHECK_OK(accel_queue_submit(compute));
    accel_queue_fill(copy, b, 128, 128, 9u);
    accel_queue_signal(copy, t, 1);
    CHECK_OK(accel_queue_submit(copy));
    r = accel_signal_wait(t, 1, 5000000000ull);   /* neither waits for the gate */
    CHECK_OK(r);
    CHECK_OK(accel_signal_wait(tc, 1, 5000000000ull));
    CHECK_EQ_U64(accel_signal_value(gate), 0);
    accel_queue_wait(later, s0, 1);          /* a value only the host sets; then what `first` waits for */
    accel_queue_signal(later, s1, 1);
    CHECK_OK(accel_queue_submit(later));
    CHECK_OK(accel_signal_set(s0, 1));
    CHECK_OK(accel_signal_wait(s1, 1, 5000000000ull));
    CHECK_OK(accel_signal_set(gate, 1));
    r = accel_signal_wait(s2, 1, 5000000000ull);
    CHECK_OK(r);
    if (r != ACCEL_OK) {   /* to tear down */
        accel_signal_fail(s1, ACCEL_ERROR_BACKEND);
    }
    CHECK_EQ_U64(accel_signal_value(done), 1);
    CHECK_EQ_U64(test_buffer_u32(b, 0), 7u);
    CHECK_EQ_U64(test_buffer_u32(b, 63), 9u);
    accel_device_destroy(dev);
}

#if TEST_HAVE_THREADS
/* Raises each of its gates to 1, 2, ... steps (all gates at each step), as fast as it can. */
typedef struct storm_arg { accel_signal** gates; uint32_t n, steps; } storm_arg;
static void storm_main(void* p) {
    storm_arg* a = (storm_arg*)p;
    for (uint32_t v = 1; v <= a->steps; v++)
        for (uint32_t j = 0; j < a->n; j++) accel_signal_set(a->gates[(j + v) % a->n], v);
}
#endif

/* Host raises that release gated waits (GPU backends: the raising thread walks the batch it releases,
   handed over by the queue's worker at the gate): four queues of 150 batches, batch i waiting for its
   queue's gate to reach i, then filling word i % 8 with i and signalling i, while two threads raise
   the gates as batches are still being submitted. Every batch runs once and in order: each queue's
   signal reaches 150 and word w holds the last i with i % 8 == w. */
TEST(host_raises_release_gated_batches_once_and_in_order) {
#if TEST_HAVE_THREADS
    enum { Q = 4, STEPS = 150, W = 8 };
    accel_device* dev;
    accel_queue* q[Q];
    accel_signal *gate[Q], *done[Q];
    accel_buffer* buf[Q];
    test_thread th[2];
    storm_arg sa[2];
    REQUIRE_OK(test_device_create(&dev));
    for (uint32_t j = 0; j < Q; j++) {
        REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q[j]));
        REQUIRE_OK(accel_signal_create(dev, 0, &gate[j]));
        REQUIRE_OK(accel_signal_create(dev, 0, &done[j]));
        REQUIRE_OK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = W * 4 }, &buf[j]));
    }
    for (uint32_t i = 1; i <= STEPS; i++) {
        if (i == STEPS / 3)
            for (uint32_t t = 0; t < 2; t++) {
                sa[t].gates = gate + t * (Q / 2);
                sa[t].n = Q / 2;
                sa[t].steps = STEPS;
                REQUIRE(test_thread_start(&th[t], storm_main, &sa[t]));
            }
        for (uint32_t j = 0; j < Q; j++) {
            accel_queue_wait(q[j], gate[j], i);
            accel_queue_fill(q[j], buf[j], (i % W) * 4, 4, i);
            accel_queue_signal(q[j], done[j], i);
            CHECK_OK(accel_queue_submit(q[j]));
        }
    }
    for (uint32_t t = 0; t < 2; t++) test_thread_join(&th[t]);
    for (uint32_t j = 0; j < Q; j++) {
        uint32_t got[W];
        CHECK_OK(accel_signal_wait(done[j], STEPS, 10000000000ull));
        CHECK_EQ_U64(accel_signal_value(done[j]), STEPS);
        CHECK_OK(accel_buffer_read(buf[j], 0, got, sizeof got));
        for (uint32_t w = 0; w < W; w++) CHECK_EQ_INT(got[w], STEPS - (STEPS - w) % W);
    }
    accel_device_destroy(dev);
#else
    SKIP("no threads");
#endif
}

int main(int argc, char** argv) {
    test_begin(argc, argv);
    RUN(two_queue_chain_each_step_reads_the_last);
    RUN(two_queue_chain_in_two_batches);
    RUN(host_set_releases_a_queue_wait);
    RUN(host_memory_commands_behind_a_host_gate);
    RUN(long_batch_behind_a_host_gate_does_not_block_submit);
    RUN(a_batch_of_more_host_waits_than_a_stream_holds_does_not_block_submit);
    RUN(many_waits_then_a_long_batch_behind_a_host_gate);
    RUN(gated_steps_past_the_list_and_the_budget_release_one_by_one);
    RUN(pipeline_submitted_ahead_behind_a_host_gate);
    RUN(second_device_releases_while_the_first_waits);
    RUN(out_of_memory_behind_a_device_wait_returns);
    RUN(device_wait_released_by_another_route);
    RUN(own_promise_raised_below_by_the_host_keeps_queue_order);
    RUN(failure_after_hand_off_flows_down_with_its_reason);
    RUN(failure_after_hand_off_reaches_many_signals_of_another_device);
    RUN(failure_is_seen_before_the_work_it_released);
    RUN(mixed_waits_cpu_to_device_and_back);
    RUN(mixed_wait_on_a_failed_cpu_signal);
    RUN(batch_with_many_signals_and_waits);
    RUN(destroy_while_a_device_wait_is_pending);
    RUN(failed_wait_waits_its_turn);
    RUN(device_wait_outlives_the_queue_it_waits_for);
    RUN(queues_created_later_are_not_held_up_by_an_earlier_wait);
    RUN(host_raises_release_gated_batches_once_and_in_order);
    return test_end();
}
