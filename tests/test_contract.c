/* tests/test_contract.c — DESIGN.md §7 (v0.3) read as a user reads it, one test per sentence that
   promises something, written from the contract alone (not from the implementation): native enqueue
   (7.1), device identity, peer info and peer copies (7.2), device generations (7.4), indirect execs
   and queue-ordered memory (7.5). Runs on every backend (ACCEL_TEST_BACKEND); the second device of the
   peer tests is a CPU device. */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test.h"
#include "kernels.h"

/* ==== 7.1 native enqueue ==== */
typedef struct native_seen { int calls; bool queue_ok, pointers_ok; uint32_t first_word; accel_buffer* buf; } native_seen;
static void native_fn(const accel_native* n, void* user) {
    native_seen* s = (native_seen*)user;
    s->calls++;
    s->queue_ok = n->queue != NULL;
    if (test_backend_is_cpu()) {
        s->pointers_ok = !n->cuda_stream && !n->vulkan_command_buffer && !n->vulkan_queue;
        s->first_word = ((uint32_t*)accel_buffer_map(s->buf))[0];   /* the fill before it completed */
    } else {
        s->pointers_ok = n->cuda_stream || (n->vulkan_command_buffer && n->vulkan_queue);
    }
}
TEST(native_step_runs_once_in_order) {
    accel_device* dev;
    accel_queue* q;
    accel_buffer* buf;
    accel_signal* s;
    native_seen seen;
    memset(&seen, 0, sizeof seen);
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(test_buffer_create(dev, 64, ACCEL_MEMORY_HOST, &buf));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    seen.buf = buf;
    accel_queue_fill(q, buf, 0, 64, 0x1234u);
    accel_queue_native(q, native_fn, &seen);
    accel_queue_signal(q, s, 1);
    CHECK_OK(accel_queue_submit(q));
    CHECK_OK(accel_signal_wait(s, 1, 10000000000ull));
    CHECK_EQ_INT(seen.calls, 1);
    CHECK(seen.queue_ok);
    CHECK(seen.pointers_ok);
    if (test_backend_is_cpu()) CHECK_EQ_INT(seen.first_word, 0x1234u);
    accel_device_destroy(dev);
}
TEST(native_null_fn_and_native_in_a_list_are_recording_errors) {
    accel_device* dev;
    accel_queue* q;
    accel_commands* c = NULL;
    native_seen seen;
    memset(&seen, 0, sizeof seen);
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    accel_queue_native(q, NULL, NULL);
    CHECK(accel_queue_submit(q) != ACCEL_OK);
    CHECK_OK(accel_queue_record_begin(q));
    accel_queue_native(q, native_fn, &seen);
    CHECK(accel_queue_record_end(q, &c) != ACCEL_OK);
    CHECK(c == NULL);
    CHECK_EQ_INT(seen.calls, 0);
    CHECK_OK(accel_queue_finish(q, 10000000000ull));
    accel_device_destroy(dev);
}

/* ==== 7.2 several devices ==== */
TEST(device_identity_fields) {
    accel_device *dev, *cpu;
    accel_device_info info, ci;
    uint8_t zero[16];
    memset(zero, 0, sizeof zero);
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(test_cpu_device_create(&cpu));
    REQUIRE_OK(accel_device_info_get(dev, &info));
    REQUIRE_OK(accel_device_info_get(cpu, &ci));
    CHECK(memcmp(ci.uuid, zero, 16) == 0);
    CHECK_EQ_U64(ci.pci_domain, UINT32_MAX);
    CHECK_EQ_U64(ci.pci_bus, UINT32_MAX);
    CHECK_EQ_U64(ci.pci_device, UINT32_MAX);
    CHECK_EQ_U64(ci.generation, 1);
    CHECK_EQ_U64(info.generation, 1);
    if (!test_backend_is_cpu()) CHECK(memcmp(info.uuid, zero, 16) != 0);
    accel_device_destroy(cpu);
    accel_device_destroy(dev);
}
TEST(peer_info_always_copies) {
    accel_device *dev, *cpu;
    accel_peer_info pi;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(test_cpu_device_create(&cpu));
    memset(&pi, 0, sizeof pi);
    CHECK_OK(accel_device_peer_info(dev, cpu, &pi));
    CHECK(pi.copy);
    memset(&pi, 0, sizeof pi);
    CHECK_OK(accel_device_peer_info(cpu, dev, &pi));
    CHECK(pi.copy);
    CHECK(accel_device_peer_info(NULL, cpu, &pi) == ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK(accel_device_peer_info(dev, cpu, NULL) == ACCEL_ERROR_INVALID_ARGUMENT);
    accel_device_destroy(cpu);
    accel_device_destroy(dev);
}
/* A copy between the device under test and a CPU device, both directions, on a queue of either, with
   offsets, ordered by the other device's signal. */
static void peer_copy_round(bool on_cpu_queue, size_t size, size_t off) {
    accel_device *dev, *cpu;
    accel_queue *q, *cq;
    accel_buffer *a, *b;
    accel_signal *ready, *done;
    uint8_t* want = (uint8_t*)malloc(size);
    uint8_t* got = (uint8_t*)malloc(size);
    REQUIRE(want && got);
    for (size_t i = 0; i < size; i++) want[i] = (uint8_t)(i * 7 + 3);
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(test_cpu_device_create(&cpu));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_queue_create(cpu, ACCEL_QUEUE_COMPUTE, &cq));
    REQUIRE_OK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = size + off }, &a));
    REQUIRE_OK(accel_buffer_create(cpu, &(accel_buffer_desc){ .size = size + off }, &b));
    REQUIRE_OK(accel_signal_create(on_cpu_queue ? dev : cpu, 0, &ready));
    REQUIRE_OK(accel_signal_create(dev, 0, &done));
    /* the source device writes, signals; the other queue waits on it, copies */
    if (on_cpu_queue) {   /* dev -> cpu, copy on the CPU queue */
        accel_queue_update(q, a, off, want, size);
        accel_queue_signal(q, ready, 1);
        CHECK_OK(accel_queue_submit(q));
        accel_queue_wait(cq, ready, 1);
        accel_queue_copy(cq, b, off, a, off, size);
        accel_queue_signal(cq, done, 1);
        CHECK_OK(accel_queue_submit(cq));
        CHECK_OK(accel_signal_wait(done, 1, 20000000000ull));
        CHECK_OK(accel_buffer_read(b, off, got, size));
    } else {              /* cpu -> dev, copy on the device's queue */
        accel_queue_update(cq, b, off, want, size);
        accel_queue_signal(cq, ready, 1);
        CHECK_OK(accel_queue_submit(cq));
        accel_queue_wait(q, ready, 1);
        accel_queue_copy(q, a, off, b, off, size);
        accel_queue_signal(q, done, 1);
        CHECK_OK(accel_queue_submit(q));
        CHECK_OK(accel_signal_wait(done, 1, 20000000000ull));
        CHECK_OK(accel_buffer_read(a, off, got, size));
    }
    CHECK(memcmp(want, got, size) == 0);
    free(want);
    free(got);
    accel_device_destroy(cpu);
    accel_device_destroy(dev);
}
TEST(peer_copy_device_to_cpu_on_the_cpu_queue) { peer_copy_round(true, 4096, 12); }
TEST(peer_copy_cpu_to_device_on_the_device_queue) { peer_copy_round(false, 4096, 12); }
TEST(peer_copy_large_and_odd_sizes) {
    peer_copy_round(false, 3u << 20, 4);
    peer_copy_round(true, 3u << 20, 4);
    peer_copy_round(false, 4, 0);
}
/* A failure of the other device's signal reaches the waiting queue's later signals. */
TEST(peer_wait_failure_flows_on) {
    accel_device *dev, *cpu;
    accel_queue* q;
    accel_buffer *a, *b;
    accel_signal *ready, *done;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(test_cpu_device_create(&cpu));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = 256 }, &a));
    REQUIRE_OK(accel_buffer_create(cpu, &(accel_buffer_desc){ .size = 256 }, &b));
    REQUIRE_OK(accel_signal_create(cpu, 0, &ready));
    REQUIRE_OK(accel_signal_create(dev, 0, &done));
    accel_queue_wait(q, ready, 1);
    accel_queue_copy(q, a, 0, b, 0, 256);
    accel_queue_signal(q, done, 1);
    CHECK_OK(accel_queue_submit(q));
    CHECK_OK(accel_signal_fail(ready, ACCEL_ERROR_BACKEND));
    CHECK_RESULT(accel_signal_wait(done, 1, 20000000000ull), ACCEL_ERROR_SIGNAL_FAILED);
    accel_device_destroy(cpu);
    accel_device_destroy(dev);
}

/* ==== 7.4 device generations ==== */
TEST(recover_makes_objects_stale_and_the_device_usable) {
    accel_device* dev;
    accel_device_info info;
    accel_queue *q, *q2;
    accel_buffer *old_buf, *buf;
    accel_signal *old_s, *pending, *s;
    uint32_t word = 0;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = 64 }, &old_buf));
    REQUIRE_OK(accel_signal_create(dev, 0, &old_s));
    REQUIRE_OK(accel_signal_create(dev, 0, &pending));
    accel_queue_wait(q, old_s, 1);   /* pending at the recover */
    accel_queue_signal(q, pending, 1);
    CHECK_OK(accel_queue_submit(q));
    CHECK_OK(accel_device_recover(dev));
    REQUIRE_OK(accel_device_info_get(dev, &info));
    CHECK_EQ_U64(info.generation, 2);
    /* what was not reached failed with DEVICE_LOST */
    CHECK(accel_signal_value(pending) > ACCEL_SIGNAL_MAX);
    CHECK(accel_signal_wait(pending, 1, 1000000000ull) != ACCEL_OK);
    /* stale objects are refused */
    CHECK_RESULT(accel_buffer_read(old_buf, 0, &word, 4), ACCEL_ERROR_DEVICE_LOST);
    CHECK_RESULT(accel_buffer_write(old_buf, 0, &word, 4), ACCEL_ERROR_DEVICE_LOST);
    CHECK(accel_signal_set(old_s, 5) != ACCEL_OK);
    accel_queue_fill(q, old_buf, 0, 4, 1);
    CHECK_RESULT(accel_queue_submit(q), ACCEL_ERROR_DEVICE_LOST);
    /* the new generation works */
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q2));
    REQUIRE_OK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = 64 }, &buf));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    accel_queue_fill(q2, buf, 0, 4, 77);
    accel_queue_signal(q2, s, 1);
    CHECK_OK(accel_queue_submit(q2));
    CHECK_OK(accel_signal_wait(s, 1, 10000000000ull));
    CHECK_OK(accel_buffer_read(buf, 0, &word, 4));
    CHECK_EQ_INT(word, 77);
    accel_queue_fill(q2, old_buf, 0, 4, 1);   /* a stale buffer on a new queue */
    CHECK_RESULT(accel_queue_submit(q2), ACCEL_ERROR_DEVICE_LOST);
    /* destroying stale objects is fine */
    accel_buffer_destroy(old_buf);
    accel_signal_destroy(old_s);
    accel_signal_destroy(pending);
    accel_queue_destroy(q);
    CHECK_OK(accel_device_recover(dev));
    REQUIRE_OK(accel_device_info_get(dev, &info));
    CHECK_EQ_U64(info.generation, 3);
    CHECK_RESULT(accel_device_recover(NULL), ACCEL_ERROR_INVALID_ARGUMENT);
    accel_device_destroy(dev);
}

/* ==== 7.5 indirect execs, queue-ordered memory ==== */
/* counts written by a command before it in the same batch; then counts of 0 (nothing runs) */
TEST(exec_indirect_reads_counts_when_it_runs) {
    enum { G = 3, L = 4, N = G * L };
    accel_device* dev;
    accel_queue* q;
    accel_buffer *out, *counts;
    accel_program* p;
    accel_signal* s;
    uint32_t got[N + 4];
    uint32_t gsz[3] = { N, 1, 1 };
    const uint32_t local[3] = { L, 1, 1 };
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = sizeof got }, &out));
    REQUIRE_OK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = 64 }, &counts));
    REQUIRE_OK(test_program_create(dev, TK_GROUP_IDS, &p));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    accel_queue_fill(q, out, 0, sizeof got, 0);
    accel_queue_fill(q, counts, 0, 64, 0);
    accel_queue_fill(q, counts, 16, 4, G);     /* x = G at offset 16 */
    accel_queue_fill(q, counts, 20, 8, 1);     /* y = z = 1 */
    accel_queue_exec_indirect(q, p, &out, 1, gsz, 3, local, counts, 16);
    accel_queue_signal(q, s, 1);
    CHECK_OK(accel_queue_submit(q));
    CHECK_OK(accel_signal_wait(s, 1, 10000000000ull));
    CHECK_OK(accel_buffer_read(out, 0, got, sizeof got));
    for (uint32_t i = 0; i < N; i++) CHECK_EQ_U64(got[i], test_group_code(i / L, 0, 0));
    for (uint32_t i = N; i < N + 4; i++) CHECK_EQ_U64(got[i], 0);
    /* counts 0 in y: nothing runs */
    accel_queue_fill(q, out, 0, sizeof got, 0);
    accel_queue_fill(q, counts, 20, 4, 0);
    accel_queue_exec_indirect(q, p, &out, 1, gsz, 3, local, counts, 16);
    accel_queue_signal(q, s, 2);
    CHECK_OK(accel_queue_submit(q));
    CHECK_OK(accel_signal_wait(s, 2, 10000000000ull));
    CHECK_OK(accel_buffer_read(out, 0, got, sizeof got));
    for (uint32_t i = 0; i < N; i++) CHECK_EQ_U64(got[i], 0);
    /* bad offsets: unaligned, past the end, NULL counts: recording errors */
    accel_queue_exec_indirect(q, p, &out, 1, gsz, 3, local, counts, 2);
    CHECK(accel_queue_submit(q) != ACCEL_OK);
    accel_queue_exec_indirect(q, p, &out, 1, gsz, 3, local, counts, 56);
    CHECK(accel_queue_submit(q) != ACCEL_OK);
    accel_queue_exec_indirect(q, p, &out, 1, gsz, 3, local, NULL, 0);
    CHECK(accel_queue_submit(q) != ACCEL_OK);
    accel_device_destroy(dev);
}
/* In a recorded list the counts buffer is patch index buffer_count. */
TEST(exec_indirect_counts_are_patchable) {
    enum { L = 2, N = 16 };
    accel_device* dev;
    accel_queue* q;
    accel_buffer *out, *c1, *c2;
    accel_program* p;
    accel_commands* list = NULL;
    uint32_t got[N];
    uint32_t gsz[3] = { N, 1, 1 };
    const uint32_t local[3] = { L, 1, 1 };
    const uint32_t three[3] = { 3, 1, 1 }, five[3] = { 5, 1, 1 };
    accel_patch patch;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = sizeof got }, &out));
    REQUIRE_OK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = 12 }, &c1));
    REQUIRE_OK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = 12 }, &c2));
    REQUIRE_OK(accel_buffer_write(c1, 0, three, 12));
    REQUIRE_OK(accel_buffer_write(c2, 0, five, 12));
    REQUIRE_OK(test_program_create(dev, TK_GROUP_IDS, &p));
    REQUIRE_OK(accel_queue_record_begin(q));
    accel_queue_exec_indirect(q, p, &out, 1, gsz, 3, local, c1, 0);
    REQUIRE_OK(accel_queue_record_end(q, &list));
    memset(got, 0, sizeof got);
    CHECK_OK(accel_buffer_write(out, 0, got, sizeof got));
    memset(&patch, 0, sizeof patch);
    patch.command = 0;
    patch.index = 1;      /* buffer_count: the counts */
    patch.buffer = c2;
    accel_queue_replay(q, list, &patch, 1);
    CHECK_OK(accel_queue_submit(q));
    CHECK_OK(accel_queue_finish(q, 10000000000ull));
    CHECK_OK(accel_buffer_read(out, 0, got, sizeof got));
    for (uint32_t i = 0; i < N; i++) CHECK_EQ_U64(got[i], i < 5 * L ? test_group_code(i / L, 0, 0) : 0);
    accel_commands_destroy(list);
    accel_device_destroy(dev);
}
TEST(queue_alloc_lives_in_queue_order) {
    accel_device* dev;
    accel_queue *q, *q2;
    accel_buffer *t = NULL, *dst;
    accel_signal *mid, *done;
    uint32_t got[64];
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q2));
    REQUIRE_OK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = sizeof got }, &dst));
    REQUIRE_OK(accel_signal_create(dev, 0, &mid));
    REQUIRE_OK(accel_signal_create(dev, 0, &done));
    CHECK_RESULT(accel_queue_alloc(q, 0, ACCEL_MEMORY_DEVICE, &t), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK_RESULT(accel_queue_submit(q), ACCEL_ERROR_INVALID_ARGUMENT);   /* the recording error */
    REQUIRE_OK(accel_queue_alloc(q, sizeof got, ACCEL_MEMORY_DEVICE, &t));
    REQUIRE(t != NULL);
    CHECK_EQ_U64(accel_buffer_size(t), sizeof got);
    accel_queue_fill(q, t, 0, sizeof got, 0xabcdu);
    accel_queue_signal(q, mid, 1);
    CHECK_OK(accel_queue_submit(q));
    /* another queue uses it after a signal q signals before the free */
    accel_queue_wait(q2, mid, 1);
    accel_queue_copy(q2, dst, 0, t, 0, sizeof got);
    accel_queue_signal(q2, done, 1);
    CHECK_OK(accel_queue_submit(q2));
    accel_queue_wait(q, done, 1);
    accel_queue_free(q, t);
    CHECK_OK(accel_queue_submit(q));
    CHECK_OK(accel_queue_finish(q, 10000000000ull));
    CHECK_OK(accel_buffer_read(dst, 0, got, sizeof got));
    for (uint32_t i = 0; i < 64; i++) CHECK_EQ_U64(got[i], 0xabcdu);
    /* many steps, alloc and free in one batch each, no host wait */
    for (uint32_t i = 0; i < 500; i++) {
        accel_buffer* s = NULL;
        REQUIRE_OK(accel_queue_alloc(q, 1u << 16, ACCEL_MEMORY_DEVICE, &s));
        accel_queue_fill(q, s, 0, 4, i);
        accel_queue_copy(q, dst, 0, s, 0, 4);
        accel_queue_free(q, s);
        CHECK_OK(accel_queue_submit(q));
    }
    CHECK_OK(accel_queue_finish(q, 20000000000ull));
    CHECK_EQ_U64(test_buffer_u32(dst, 0), 499);
    /* destroy instead of free: after the work that uses it */
    REQUIRE_OK(accel_queue_alloc(q, 256, ACCEL_MEMORY_DEVICE, &t));
    accel_queue_fill(q, t, 0, 256, 9);
    accel_queue_copy(q, dst, 0, t, 0, 4);
    CHECK_OK(accel_queue_submit(q));
    accel_buffer_destroy(t);
    CHECK_OK(accel_queue_finish(q, 10000000000ull));
    CHECK_EQ_U64(test_buffer_u32(dst, 0), 9);
    /* allocations pending at teardown */
    REQUIRE_OK(accel_queue_alloc(q, 4096, ACCEL_MEMORY_DEVICE, &t));
    accel_queue_fill(q, t, 0, 4096, 1);
    CHECK_OK(accel_queue_submit(q));
    accel_device_destroy(dev);
}

int main(int argc, char** argv) {
    test_begin(argc, argv);
    RUN(native_step_runs_once_in_order);
    RUN(native_null_fn_and_native_in_a_list_are_recording_errors);
    RUN(device_identity_fields);
    RUN(peer_info_always_copies);
    RUN(peer_copy_device_to_cpu_on_the_cpu_queue);
    RUN(peer_copy_cpu_to_device_on_the_device_queue);
    RUN(peer_copy_large_and_odd_sizes);
    RUN(peer_wait_failure_flows_on);
    RUN(recover_makes_objects_stale_and_the_device_usable);
    RUN(exec_indirect_reads_counts_when_it_runs);
    RUN(exec_indirect_counts_are_patchable);
    RUN(queue_alloc_lives_in_queue_order);
    return test_end();
}
